//! Rust results to Python dicts and column buffers (the facade turns them into pandas/NumPy).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use ccscope_net::Service;
use ccscope_sim::metrics::{FlowSummary, RunResult};
use ccscope_sim::pktlog::PacketLog;
use ccscope_sim::Scenario;

pub fn toml_to_py(py: Python<'_>, v: &toml::Value) -> PyResult<PyObject> {
    Ok(match v {
        toml::Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Integer(i) => i.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        toml::Value::Datetime(d) => d.to_string().into_pyobject(py)?.into_any().unbind(),
        toml::Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(toml_to_py(py, x)?)?;
            }
            l.into_any().unbind()
        }
        toml::Value::Table(t) => {
            let d = PyDict::new(py);
            for (k, x) in t {
                d.set_item(k, toml_to_py(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

pub fn scenario_info<'py>(py: Python<'py>, sc: &Scenario) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &sc.name)?;
    d.set_item("seed", sc.seed)?;
    d.set_item("duration_s", sc.duration.as_secs_f64())?;
    d.set_item("flows", sc.flows.len())?;
    d.set_item(
        "controllers",
        sc.flows
            .iter()
            .map(|f| f.controller.clone())
            .collect::<Vec<_>>(),
    )?;
    let link = |s: &Service| match s {
        Service::Constant(r) => format!("{} Mbit/s", r.as_mbps()),
        Service::Trace { trace, once } => {
            format!(
                "trace {}{}",
                trace.path.display(),
                if *once { " (once)" } else { "" }
            )
        }
    };
    let links = PyDict::new(py);
    for l in &sc.links {
        links.set_item(&l.name, link(&l.service))?;
    }
    if let Some((data, ack)) = sc.dumbbell {
        d.set_item("data_link", link(&sc.links[data].service))?;
        d.set_item("ack_link", link(&sc.links[ack].service))?;
    }
    d.set_item("links", links)?;
    d.set_item("monitor", &sc.links[sc.monitor].name)?;
    d.set_item("inputs", input_files(sc))?;
    Ok(d)
}

/// Every file the scenario reads, as resolved by the loader: link traces and controllers' input
/// files (`ccscope_cc::INPUT_FILE_KEYS`). Sorted and without repeats; a results folder
/// records a content hash of each.
pub fn input_files(sc: &Scenario) -> Vec<String> {
    let mut files = std::collections::BTreeSet::new();
    for l in &sc.links {
        if let Service::Trace { trace, .. } = &l.service {
            files.insert(trace.path.display().to_string());
        }
    }
    for f in &sc.flows {
        for &key in ccscope_cc::INPUT_FILE_KEYS {
            if let Some(toml::Value::String(m)) = f.params.get(key) {
                files.insert(m.clone());
            }
        }
    }
    files.into_iter().collect()
}

fn summary<'py>(py: Python<'py>, f: &FlowSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flow", f.flow.map(|x| x as i64).unwrap_or(-1))?;
    d.set_item("controller", &f.controller)?;
    d.set_item("sent", f.sent)?;
    d.set_item("delivered", f.delivered)?;
    d.set_item("dropped", f.dropped)?;
    d.set_item("in_flight", f.in_flight)?;
    d.set_item("declared_lost", f.declared_lost)?;
    d.set_item("duration_s", f.duration_s)?;
    d.set_item("throughput_mbps", f.throughput_mbps)?;
    d.set_item("goodput_mbps", f.goodput_mbps)?;
    d.set_item("first_tx_mbps", f.first_tx_mbps)?;
    d.set_item("retransmissions", f.retransmissions)?;
    d.set_item("rtos", f.rtos)?;
    d.set_item("capacity_mbps", f.capacity_mbps)?;
    d.set_item("utilization", f.utilization)?;
    d.set_item("queue_delay_p95_ms", f.queue_delay_p95_ms)?;
    d.set_item("queue_delay_mean_ms", f.queue_delay_mean_ms)?;
    d.set_item("signal_delay_p95_ms", f.signal_delay_p95_ms)?;
    d.set_item("one_way_delay_p95_ms", f.one_way_delay_p95_ms)?;
    d.set_item("one_way_delay_mean_ms", f.one_way_delay_mean_ms)?;
    d.set_item("loss_rate", f.loss_rate)?;
    d.set_item("score", f.score)?;
    d.set_item("log2_score", f.log2_score)?;
    d.set_item("transfers_done", f.transfers_done)?;
    d.set_item("fct_mean_s", f.fct_mean_s)?;
    d.set_item("transfers_started", f.transfers_started)?;
    d.set_item("file_bytes_done", f.file_bytes_done)?;
    d.set_item("goodput_bytes", f.goodput_bytes)?;
    d.set_item("on_rate_mbps", f.on_rate_mbps)?;
    d.set_item("largest_file_bytes", f.largest_file_bytes)?;
    d.set_item("files_capped", f.files_capped)?;
    for (k, v) in &f.counters {
        d.set_item(*k, *v)?;
    }
    Ok(d)
}

fn bytes_of<'py, T: Copy>(
    py: Python<'py>,
    v: &[T],
    to: impl Fn(T) -> Vec<u8>,
) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(v));
    for &x in v {
        out.extend_from_slice(&to(x));
    }
    PyBytes::new(py, &out)
}

pub fn result<'py>(
    py: Python<'py>,
    r: &RunResult,
    log: Option<&PacketLog>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let total = summary(py, &r.total)?;
    total.set_item("jain_index", r.jain_index)?;
    total.set_item("events", r.events)?;
    total.set_item("sim_end_s", r.sim_end_s)?;
    let (s, dl, dr, inf) = r.acks;
    total.set_item("acks_sent", s)?;
    total.set_item("acks_delivered", dl)?;
    total.set_item("acks_dropped", dr)?;
    total.set_item("acks_in_flight", inf)?;
    d.set_item("summary", total)?;
    let flows = PyList::empty(py);
    for f in &r.flows {
        flows.append(summary(py, f)?)?;
    }
    d.set_item("flows", flows)?;
    let links = PyList::empty(py);
    for l in &r.links {
        let x = PyDict::new(py);
        x.set_item("link", &l.name)?;
        x.set_item("arrivals", l.arrivals)?;
        x.set_item("departures", l.departures)?;
        x.set_item("dropped", l.dropped)?;
        x.set_item("queued", l.queued)?;
        x.set_item("in_pipe", l.in_pipe)?;
        x.set_item("forwarded", l.forwarded)?;
        x.set_item("throughput_mbps", l.throughput_mbps)?;
        x.set_item("capacity_mbps", l.capacity_mbps)?;
        x.set_item("utilization", l.utilization)?;
        x.set_item(
            "loss_rate",
            if l.arrivals > 0 {
                l.dropped as f64 / l.arrivals as f64
            } else {
                0.0
            },
        )?;
        x.set_item("queue_delay_p95_ms", l.queue_delay_p95_ms)?;
        x.set_item("queue_delay_mean_ms", l.queue_delay_mean_ms)?;
        links.append(x)?;
    }
    d.set_item("links", links)?;
    let paths = PyList::empty(py);
    for p in &r.paths {
        let x = PyDict::new(py);
        x.set_item("flow", p.flow)?;
        x.set_item("path", p.path)?;
        x.set_item("sent", p.sent)?;
        x.set_item("delivered", p.delivered)?;
        x.set_item("dropped", p.dropped)?;
        x.set_item("acks_sent", p.acks_sent)?;
        x.set_item("acks_delivered", p.acks_delivered)?;
        x.set_item("acks_dropped", p.acks_dropped)?;
        x.set_item("retransmissions", p.retransmissions)?;
        x.set_item("fast_retransmits", p.fast_retransmits)?;
        x.set_item("timeouts", p.timeouts)?;
        x.set_item("mean_cwnd_bytes", p.mean_cwnd_bytes)?;
        paths.append(x)?;
    }
    d.set_item("paths", paths)?;

    // Time series: one row per (flow, bin); flow -1 is the whole link.
    let bin_s = r.bin_s;
    let mbps = |bytes: u64| bytes as f64 * 8.0 / bin_s / 1e6;
    let nbins = r.bins.iter().map(|b| b.len()).max().unwrap_or(0);
    let mut cols: Vec<(&str, Vec<f64>)> = [
        "time_s",
        "flow",
        "capacity_mbps",
        "ingress_mbps",
        "throughput_mbps",
        "delivered_mbps",
        "queue_delay_mean_ms",
        "queue_delay_max_ms",
        "one_way_delay_mean_ms",
        "one_way_delay_max_ms",
        "drops",
        "cwnd",
    ]
    .iter()
    .map(|n| {
        (
            *n,
            Vec::with_capacity(nbins * r.bins.iter().filter(|b| !b.is_empty()).count()),
        )
    })
    .collect();
    let nflows = r.bins.len() - 1;
    for (fi, bins) in r.bins.iter().enumerate() {
        let flow = if fi == nflows { -1.0 } else { fi as f64 };
        if bins.is_empty() {
            continue; // a flow (or link) without a time series has no rows
        }
        let mut last_cwnd = f64::NAN;
        for i in 0..nbins {
            let b = bins.get(i).copied().unwrap_or_default();
            if b.cwnd > 0 {
                last_cwnd = b.cwnd as f64;
            }
            let vals = [
                i as f64 * bin_s,
                flow,
                if flow < 0.0 {
                    mbps(b.capacity_bytes)
                } else {
                    f64::NAN
                },
                mbps(b.ingress_bytes),
                mbps(b.departed_bytes),
                mbps(b.delivered_bytes),
                if b.departures > 0 {
                    b.queue_delay_sum_ms as f64 / b.departures as f64
                } else {
                    f64::NAN
                },
                if b.departures > 0 {
                    b.queue_delay_max_ms as f64
                } else {
                    f64::NAN
                },
                if b.deliveries > 0 {
                    b.one_way_sum_ns as f64 / b.deliveries as f64 / 1e6
                } else {
                    f64::NAN
                },
                if b.deliveries > 0 {
                    b.one_way_max_ns as f64 / 1e6
                } else {
                    f64::NAN
                },
                b.dropped as f64,
                if flow < 0.0 { f64::NAN } else { last_cwnd },
            ];
            for (c, v) in cols.iter_mut().zip(vals) {
                c.1.push(v);
            }
        }
    }
    let ts = PyDict::new(py);
    for (name, v) in cols {
        ts.set_item(name, bytes_of(py, &v, |x: f64| x.to_le_bytes().to_vec()))?;
    }
    d.set_item("timeseries", ts)?;

    let cw = PyDict::new(py);
    cw.set_item(
        "time_ns",
        bytes_of(py, &r.cwnd, |x: (u64, u32, u32)| x.0.to_le_bytes().to_vec()),
    )?;
    cw.set_item(
        "flow",
        bytes_of(py, &r.cwnd, |x: (u64, u32, u32)| x.1.to_le_bytes().to_vec()),
    )?;
    cw.set_item(
        "cwnd",
        bytes_of(py, &r.cwnd, |x: (u64, u32, u32)| x.2.to_le_bytes().to_vec()),
    )?;
    d.set_item("cwnd", cw)?;
    let sm = PyDict::new(py);
    sm.set_item(
        "user",
        bytes_of(py, &r.samples, |x: (u32, u64, u32, u32)| {
            x.0.to_le_bytes().to_vec()
        }),
    )?;
    sm.set_item(
        "t_ns",
        bytes_of(py, &r.samples, |x: (u32, u64, u32, u32)| {
            x.1.to_le_bytes().to_vec()
        }),
    )?;
    sm.set_item(
        "d_ms",
        bytes_of(py, &r.samples, |x: (u32, u64, u32, u32)| {
            x.2.to_le_bytes().to_vec()
        }),
    )?;
    sm.set_item(
        "w",
        bytes_of(py, &r.samples, |x: (u32, u64, u32, u32)| {
            x.3.to_le_bytes().to_vec()
        }),
    )?;
    d.set_item("samples", sm)?;

    if let Some(log) = log {
        let p = PyDict::new(py);
        p.set_item(
            "time_ns",
            bytes_of(py, &log.time_ns, |x: u64| x.to_le_bytes().to_vec()),
        )?;
        p.set_item("event", PyBytes::new(py, &log.event))?;
        p.set_item(
            "flow",
            bytes_of(py, &log.flow, |x: i32| x.to_le_bytes().to_vec()),
        )?;
        p.set_item(
            "seq",
            bytes_of(py, &log.seq, |x: u64| x.to_le_bytes().to_vec()),
        )?;
        p.set_item(
            "bytes",
            bytes_of(py, &log.bytes, |x: u32| x.to_le_bytes().to_vec()),
        )?;
        p.set_item(
            "delay_ms",
            bytes_of(py, &log.delay_ms, |x: u64| x.to_le_bytes().to_vec()),
        )?;
        d.set_item("packets", p)?;
    } else {
        d.set_item("packets", py.None())?;
    }
    Ok(d)
}
