//! Bindings of the CMT Markov chain (ccscope-models, paper 002 §4.3).

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use ccscope_models::cmt_markov::{
    self as model, CmtMarkovError as Error, LossModel, Params, Solution, Solver,
};

create_exception!(ccscope._native, CmtMarkovError, PyValueError, "A CMT Markov-chain parameter is invalid or the solve missed its residual bound (message names the field).");

fn err(e: Error) -> PyErr {
    CmtMarkovError::new_err(e.to_string())
}

/// A non-negative integer field, refused with the field's name (Python ints may be negative).
fn count<T: TryFrom<i64>>(field: &str, v: i64) -> PyResult<T> {
    T::try_from(v).map_err(|_| {
        CmtMarkovError::new_err(format!(
            "field `{field}`: {v} is not a non-negative integer in range"
        ))
    })
}

fn solution<'py>(py: Python<'py>, s: &Solution) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("throughput_mbps", s.throughput_mbps)?;
    d.set_item("throughput_pps", s.throughput_pps)?;
    d.set_item("window_packets", s.window_packets)?;
    d.set_item("loss", s.loss.name())?;
    d.set_item("states", s.states)?;
    d.set_item("nonzeros", s.nonzeros)?;
    d.set_item("iterations", s.iterations)?;
    d.set_item("residual", s.residual)?;
    d.set_item("solve_time_s", s.solve_time_s)?;
    d.set_item("solver", s.solver.name())?;
    d.set_item("mean_sent", s.mean_sent)?;
    d.set_item("mean_lost", s.mean_lost)?;
    d.set_item("mean_duration_s", s.mean_duration_s)?;
    d.set_item("fast_retransmits_per_round", s.fast_retransmits_per_round)?;
    d.set_item("timeouts_per_round", s.timeouts_per_round)?;
    Ok(d)
}

#[allow(clippy::too_many_arguments)]
fn params(
    p: f64,
    b_mbps: f64,
    d_ms: f64,
    rbuf_bytes: i64,
    loss: &str,
    rto_max_s: f64,
    packet_bytes: i64,
    window_packets: Option<i64>,
) -> PyResult<Params> {
    Ok(Params {
        p,
        b_mbps,
        d_ms,
        rbuf_bytes: count("rbuf_bytes", rbuf_bytes)?,
        loss: LossModel::parse(loss).map_err(err)?,
        rto_max_s,
        packet_bytes: count("packet_bytes", packet_bytes)?,
        window_packets: window_packets
            .map(|w| count("window_packets", w))
            .transpose()?,
    })
}

/// Solve one path's chain; a dict of throughput and diagnostics (see ccscope.models.cmt.MarkovResult).
#[pyfunction]
#[pyo3(signature = (p, b_mbps, d_ms, rbuf_bytes, loss="correlated", rto_max_s=60.0, packet_bytes=1500, window_packets=None, solver="auto"))]
#[allow(clippy::too_many_arguments)]
pub fn cmt_markov<'py>(
    py: Python<'py>,
    p: f64,
    b_mbps: f64,
    d_ms: f64,
    rbuf_bytes: i64,
    loss: &str,
    rto_max_s: f64,
    packet_bytes: i64,
    window_packets: Option<i64>,
    solver: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let params = params(
        p,
        b_mbps,
        d_ms,
        rbuf_bytes,
        loss,
        rto_max_s,
        packet_bytes,
        window_packets,
    )?;
    let solver = Solver::parse(solver).map_err(err)?;
    let s = py
        .allow_threads(|| model::solve(&params, solver))
        .map_err(err)?;
    solution(py, &s)
}

/// Solve the chain for each window in `windows` (packets): one dict per window, in order.
#[pyfunction]
#[pyo3(signature = (p, b_mbps, d_ms, windows, loss="correlated", rto_max_s=60.0, packet_bytes=1500))]
#[allow(clippy::too_many_arguments)]
pub fn cmt_markov_curve<'py>(
    py: Python<'py>,
    p: f64,
    b_mbps: f64,
    d_ms: f64,
    windows: Vec<i64>,
    loss: &str,
    rto_max_s: f64,
    packet_bytes: i64,
) -> PyResult<Bound<'py, PyList>> {
    let params = params(p, b_mbps, d_ms, 0, loss, rto_max_s, packet_bytes, None)?;
    let windows: Vec<u64> = windows
        .into_iter()
        .map(|w| count("windows", w))
        .collect::<PyResult<_>>()?;
    let sols = py
        .allow_threads(|| model::throughput_curve(&params, &windows))
        .map_err(err)?;
    let out = PyList::empty(py);
    for s in &sols {
        out.append(solution(py, s)?)?;
    }
    Ok(out)
}
