//! Controllers written in Python, driven through the same `Controller` trait as the built-ins.
//!
//! The Python object has the methods of `ccscope.Controller`: `on_ack(now_ms, ack)` and optionally
//! `on_send(now_ms, seq, in_flight, after_timeout)`, `on_loss(now_ms, seq, send_time_ms, in_flight,
//! cause)`, `on_timeout(now_ms)`, plus attributes (or zero-argument methods) `cwnd`, `timeout_ms`
//! and `pacing_rate_mbps`. Decisions are re-read after every call.

use std::sync::{Arc, Mutex};

use ccscope_cc::{AckEvent, Controller, LossCause, LossEvent, SendEvent};
use ccscope_core::{Bandwidth, Dur, Time};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The first exception a Python controller raised; the run reports it when it ends.
#[derive(Clone, Default)]
pub struct ErrorSlot(Arc<Mutex<Option<PyErr>>>);

impl ErrorSlot {
    fn set(&self, e: PyErr) {
        let mut g = self.0.lock().expect("not poisoned");
        if g.is_none() {
            *g = Some(e);
        }
    }
    pub fn take(&self) -> Option<PyErr> {
        self.0.lock().expect("not poisoned").take()
    }
}

/// What an ACK tells a Python controller.
#[pyclass(frozen, get_all, module = "ccscope._native")]
pub struct Ack {
    pub seq: u64,
    pub bytes: u32,
    pub send_time_ms: f64,
    pub recv_time_ms: f64,
    pub rtt_ms: f64,
    pub in_flight: u32,
    pub last_sent_seq: u64,
    /// The ACK's delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), `None` when it
    /// has none: packets delivered over `rate_interval_ms`, their rate, and the sample's fields.
    pub rate_delivered: Option<u64>,
    pub rate_interval_ms: Option<f64>,
    pub delivery_rate_pps: Option<f64>,
    pub rate_prior_delivered: Option<u64>,
    pub delivered_total: Option<u64>,
    pub rate_rtt_ms: Option<f64>,
    pub rate_app_limited: Option<bool>,
}

#[pymethods]
impl Ack {
    fn __repr__(&self) -> String {
        format!(
            "Ack(seq={}, rtt_ms={:.3}, in_flight={})",
            self.seq, self.rtt_ms, self.in_flight
        )
    }
}

pub struct PyController {
    obj: Py<PyAny>,
    cwnd: u32,
    timeout: Dur,
    pacing: Option<Bandwidth>,
    on_send: bool,
    on_loss: bool,
    on_timeout: bool,
    errors: ErrorSlot,
}

fn read_attr(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<f64>> {
    let Ok(v) = obj.getattr(name) else {
        return Ok(None);
    };
    let v = if v.is_callable() { v.call0()? } else { v };
    if v.is_none() {
        return Ok(None);
    }
    Ok(Some(v.extract::<f64>()?))
}

impl PyController {
    pub fn build(
        py: Python<'_>,
        factory: &PyObject,
        index: usize,
        params: &toml::Table,
        errors: ErrorSlot,
    ) -> PyResult<Self> {
        let kwargs = PyDict::new(py);
        for (k, v) in params {
            kwargs.set_item(k, crate::convert::toml_to_py(py, v)?)?;
        }
        let obj = factory.call1(py, (index, kwargs))?;
        let b = obj.bind(py);
        if !b.hasattr("on_ack")? {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "a Python controller needs an on_ack(now_ms, ack) method",
            ));
        }
        // A hook counts only if the class overrides the no-op of `ccscope.Controller`: skipping the
        // inherited no-ops saves a Python call per packet.
        let base = py
            .import("ccscope.controller")
            .and_then(|m| m.getattr("Controller"))
            .ok();
        let cls = b.get_type();
        let has = |n: &str| {
            let Ok(f) = cls.getattr(n) else {
                return b.getattr(n).map(|a| a.is_callable()).unwrap_or(false);
            };
            match base.as_ref().and_then(|c| c.getattr(n).ok()) {
                Some(inherited) if f.is(&inherited) => false,
                _ => f.is_callable(),
            }
        };
        let mut c = PyController {
            on_send: has("on_send"),
            on_loss: has("on_loss"),
            on_timeout: has("on_timeout"),
            obj: obj.clone_ref(py),
            cwnd: 1,
            timeout: Dur::from_ms(1000),
            pacing: None,
            errors,
        };
        c.refresh(b)?;
        Ok(c)
    }

    fn refresh(&mut self, b: &Bound<'_, PyAny>) -> PyResult<()> {
        let w = read_attr(b, "cwnd")?.ok_or_else(|| {
            pyo3::exceptions::PyTypeError::new_err(
                "a Python controller needs a `cwnd` attribute or method",
            )
        })?;
        self.cwnd = if w.is_finite() && w > 0.0 {
            w.min(u32::MAX as f64) as u32
        } else {
            0
        };
        if let Some(t) = read_attr(b, "timeout_ms")? {
            if t > 0.0 && t.is_finite() {
                self.timeout = Dur::from_ms_f64(t);
            }
        }
        self.pacing = read_attr(b, "pacing_rate_mbps")?
            .filter(|r| *r > 0.0 && r.is_finite())
            .map(Bandwidth::from_mbps);
        Ok(())
    }

    fn call(&mut self, f: impl FnOnce(Python<'_>, &Bound<'_, PyAny>) -> PyResult<()>) {
        Python::with_gil(|py| {
            let b = self.obj.bind(py).clone();
            if let Err(e) = f(py, &b).and_then(|_| self.refresh(&b)) {
                self.errors.set(e);
            }
        });
    }
}

fn ms(t: Time) -> f64 {
    t.as_ms_f64()
}

impl Controller for PyController {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        if self.on_send {
            let ev = *ev;
            self.call(|_, b| {
                b.call_method1("on_send", (ms(now), ev.seq, ev.in_flight, ev.after_timeout))
                    .map(|_| ())
            });
        }
        0
    }

    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        let ack = Ack {
            seq: ev.seq,
            bytes: ev.bytes,
            send_time_ms: ms(ev.send_time),
            recv_time_ms: ms(ev.recv_time),
            rtt_ms: ev.rtt.as_ms_f64(),
            in_flight: ev.in_flight,
            last_sent_seq: ev.last_sent_seq,
            rate_delivered: ev.rate.map(|r| r.delivered),
            rate_interval_ms: ev.rate.map(|r| r.interval.as_ms_f64()),
            delivery_rate_pps: ev.rate.map(|r| r.rate_pps()),
            rate_prior_delivered: ev.rate.map(|r| r.prior_delivered),
            delivered_total: ev.rate.map(|r| r.delivered_total),
            rate_rtt_ms: ev.rate.map(|r| r.rtt.as_ms_f64()),
            rate_app_limited: ev.rate.map(|r| r.is_app_limited),
        };
        self.call(|py, b| {
            b.call_method1("on_ack", (ms(now), Py::new(py, ack)?))
                .map(|_| ())
        });
    }

    fn on_loss(&mut self, now: Time, ev: &LossEvent) {
        if self.on_loss {
            let ev = *ev;
            let cause = match ev.cause {
                LossCause::Reordering => "reordering",
                LossCause::Timeout => "timeout",
            };
            self.call(|_, b| {
                b.call_method1(
                    "on_loss",
                    (ms(now), ev.seq, ms(ev.send_time), ev.in_flight, cause),
                )
                .map(|_| ())
            });
        }
    }

    fn on_timeout(&mut self, now: Time) {
        if self.on_timeout {
            self.call(|_, b| b.call_method1("on_timeout", (ms(now),)).map(|_| ()));
        }
    }

    fn cwnd(&self) -> u32 {
        self.cwnd
    }

    fn pacing_rate(&self) -> Option<Bandwidth> {
        self.pacing
    }

    fn timeout(&self) -> Dur {
        self.timeout
    }

    fn state_name(&self) -> &'static str {
        "python"
    }
}
