//! ccscope._native: the Rust core exposed to Python. The typed facade lives in python/ccscope.

mod cmt;
mod controller;
mod convert;

use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use ccscope_sim::{load_scenario_overridden, ConfigError, Simulation};

create_exception!(
    ccscope._native,
    ScenarioError,
    PyValueError,
    "A scenario file or value is invalid (message names file, line and field)."
);
create_exception!(
    ccscope._native,
    TraceError,
    ScenarioError,
    "A Mahimahi trace file is invalid (message names file, line and field)."
);
create_exception!(
    ccscope._native,
    ControllerError,
    ScenarioError,
    "A controller name or parameter is invalid."
);

fn config_err(e: ConfigError) -> PyErr {
    match &e {
        ConfigError::Trace(_) => TraceError::new_err(e.to_string()),
        ConfigError::Field { field, .. }
            if field.ends_with("controller") || e.to_string().contains("parameter") =>
        {
            ControllerError::new_err(e.to_string())
        }
        _ => ScenarioError::new_err(e.to_string()),
    }
}

fn load(
    text: &str,
    written: Option<&str>,
    file: Option<String>,
    search: Vec<String>,
    overrides: &[String],
) -> PyResult<ccscope_sim::Scenario> {
    let search: Vec<PathBuf> = search.into_iter().map(PathBuf::from).collect();
    load_scenario_overridden(
        text,
        written,
        file.as_deref().map(std::path::Path::new),
        &search,
        overrides,
    )
    .map_err(config_err)
}

/// Validate scenario text; returns a short description of what it holds. `written`: the file as
/// written when `text` has `overrides` applied (errors name its lines).
#[pyfunction]
#[pyo3(signature = (text, file=None, search=vec![], overrides=vec![], written=None))]
fn validate_scenario<'py>(
    py: Python<'py>,
    text: &str,
    file: Option<String>,
    search: Vec<String>,
    overrides: Vec<String>,
    written: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = load(text, written.as_deref(), file, search, &overrides)?;
    convert::scenario_info(py, &sc)
}

/// Run scenario text. `factory(index, params: dict) -> object` builds `controller = "python"` flows.
#[pyfunction]
#[pyo3(signature = (text, file=None, search=vec![], factory=None, log_path=None, seed=None, overrides=vec![], written=None))]
#[allow(clippy::too_many_arguments)]
fn run_scenario<'py>(
    py: Python<'py>,
    text: &str,
    file: Option<String>,
    search: Vec<String>,
    factory: Option<PyObject>,
    log_path: Option<String>,
    seed: Option<u64>,
    overrides: Vec<String>,
    written: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut sc = load(text, written.as_deref(), file.clone(), search, &overrides)?;
    if let Some(s) = seed {
        sc.seed = s;
    }
    if log_path.is_some() {
        sc.packet_log = true;
    }
    let label = file.unwrap_or_else(|| "<scenario>".into());
    let errors = controller::ErrorSlot::default();
    let mut has_python = false;
    let mut build_err: Option<PyErr> = None;
    let sim = {
        let mut make = |i: usize,
                        f: &ccscope_sim::FlowSpec|
         -> Result<ccscope_cc::AnyController, ccscope_cc::ParamError> {
            if f.controller != "python" {
                return ccscope_cc::build(&f.controller, &f.params);
            }
            has_python = true;
            let Some(factory) = &factory else {
                return Err(ccscope_cc::registry::invalid(
                    "controller",
                    "`python` controllers need the Python API (ccscope.run)",
                ));
            };
            match controller::PyController::build(py, factory, i, &f.params, errors.clone(), &label)
            {
                Ok(c) => Ok(ccscope_cc::AnyController::boxed(c)),
                Err(e) => {
                    // A configuration error names the flow's field; an exception from the user's
                    // own code (the constructor, the module's import) keeps its type and traceback.
                    build_err = Some(if e.is_instance_of::<ScenarioError>(py) {
                        let msg =
                            format!("{label}: field `flows[{i}].controller`: {}", e.value(py));
                        ControllerError::new_err(msg)
                    } else {
                        controller::tag_build(py, &e, i);
                        e
                    });
                    Err(ccscope_cc::registry::invalid(
                        "controller",
                        "python controller failed",
                    ))
                }
            }
        };
        Simulation::with_factory(&sc, &mut make)
    };
    if let Some(e) = build_err {
        return Err(e);
    }
    let sim = sim.map_err(|e| ControllerError::new_err(format!("{label}: {e}")))?;
    let (result, log) = if has_python {
        sim.run()
    } else {
        py.allow_threads(|| sim.run())
    };
    if let Some(e) = errors.take() {
        return Err(e);
    }
    if let (Some(path), Some(log)) = (&log_path, &log) {
        let f = std::fs::File::create(path)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{path}: {e}")))?;
        let mut w = std::io::BufWriter::new(f);
        log.write_mahimahi(&mut w, false)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{path}: {e}")))?;
    }
    let d = convert::result(py, &result, log.as_ref())?;
    d.set_item("scenario", convert::scenario_info(py, &sc)?)?;
    Ok(d)
}

/// Every built-in controller with its documented parameters and defaults.
#[pyfunction]
fn controllers(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for c in ccscope_cc::CONTROLLERS {
        let d = PyDict::new(py);
        d.set_item("name", c.name)?;
        d.set_item("summary", c.summary)?;
        let params = PyList::empty(py);
        for (name, default, unit, doc) in ccscope_cc::describe(c.name).expect("registered") {
            params.append((name, default, unit, doc))?;
        }
        d.set_item("params", params)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Time the benchmark cases (median of `repeats`); traces are looked up in each of `traces_dirs`.
/// One dict per measured case; when `names` is None, also one `{"case", "skipped": reason}` dict per
/// case left out because its trace is not on the search path.
#[pyfunction]
#[pyo3(signature = (traces_dirs, names=None, repeats=3))]
fn run_bench(
    py: Python<'_>,
    traces_dirs: Vec<String>,
    names: Option<Vec<String>>,
    repeats: usize,
) -> PyResult<Bound<'_, PyList>> {
    let search: Vec<std::path::PathBuf> =
        traces_dirs.iter().map(std::path::PathBuf::from).collect();
    let (mut cases, skipped) = ccscope_sim::bench::cases(&search).map_err(config_err)?;
    // Scale cases run only when named.
    for want in names.iter().flatten() {
        if let Some(c) = ccscope_sim::bench::scale_case(want).map_err(config_err)? {
            cases.push(c);
        }
    }
    if let Some(n) = &names {
        for want in n {
            if !cases.iter().any(|c| c.name == want) {
                if let Some(s) = skipped.iter().find(|s| s.name == want) {
                    return Err(TraceError::new_err(format!(
                        "bench case `{want}` is unavailable: {}",
                        s.reason
                    )));
                }
                let known: Vec<_> = cases
                    .iter()
                    .map(|c| c.name)
                    .chain(skipped.iter().map(|s| s.name))
                    .chain(ccscope_sim::bench::SCALE_CASES.iter().copied())
                    .collect();
                return Err(ScenarioError::new_err(format!(
                    "unknown bench case `{want}` (known: {})",
                    known.join(", ")
                )));
            }
        }
    }
    let out = PyList::empty(py);
    for c in cases
        .iter()
        .filter(|c| names.as_ref().is_none_or(|n| n.iter().any(|x| x == c.name)))
    {
        let f = py.allow_threads(|| ccscope_sim::bench::measure(c, repeats));
        let d = PyDict::new(py);
        d.set_item("case", f.name)?;
        d.set_item("wall_s", f.wall_s)?;
        d.set_item("sim_s", f.sim_s)?;
        d.set_item("delivered", f.delivered)?;
        d.set_item("events", f.events)?;
        d.set_item("goodput_mbps", f.goodput_mbps)?;
        d.set_item("pkts_per_wall_s", f.pkts_per_wall_s)?;
        d.set_item("sim_s_per_wall_s", f.sim_s_per_wall_s)?;
        out.append(d)?;
    }
    // Cases left out for a missing trace (only when all cases were asked for): a row with the reason.
    if names.is_none() {
        for s in &skipped {
            let d = PyDict::new(py);
            d.set_item("case", s.name)?;
            d.set_item("skipped", &s.reason)?;
            out.append(d)?;
        }
    }
    Ok(out)
}

/// ns per hold-model operation: (radix heap, binary heap) with `pending` resident events.
#[pyfunction]
fn event_queue_baseline(py: Python<'_>, pending: usize, ops: usize) -> (f64, f64) {
    py.allow_threads(|| ccscope_sim::bench::event_queue_baseline(pending, ops))
}

/// FNV-1a 64-bit hash (offset basis 0xcbf29ce484222325, prime 0x100000001b3): the `.ccm` trailer.
#[pyfunction]
fn fnv1a64(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// `text` as errors quote it, on one line: control characters and line separators escaped
/// (`ccscope_core::text::one_line`, the loader's own rule).
#[pyfunction]
fn one_line(text: &str) -> String {
    ccscope_core::text::one_line(text).into_owned()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(validate_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(controllers, m)?)?;
    m.add_function(wrap_pyfunction!(fnv1a64, m)?)?;
    m.add_function(wrap_pyfunction!(one_line, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(event_queue_baseline, m)?)?;
    m.add_function(wrap_pyfunction!(cmt::cmt_markov, m)?)?;
    m.add_function(wrap_pyfunction!(cmt::cmt_markov_curve, m)?)?;
    m.add_class::<controller::Ack>()?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("TraceError", m.py().get_type::<TraceError>())?;
    m.add("ControllerError", m.py().get_type::<ControllerError>())?;
    m.add("CmtMarkovError", m.py().get_type::<cmt::CmtMarkovError>())?;
    // The simulator's bounds, for the Python checks that must agree with the scenario loader's.
    m.add("MAX_RUN_S", ccscope_core::MAX_RUN_S)?;
    m.add("MIN_RATE_MBPS", ccscope_core::MIN_RATE_MBPS)?;
    m.add("MAX_RATE_MBPS", ccscope_core::MAX_RATE_MBPS)?;
    Ok(())
}
