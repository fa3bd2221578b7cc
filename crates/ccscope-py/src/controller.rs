//! Controllers written in Python, driven through the same `Controller` trait as the built-ins.
//!
//! The Python object has the methods of `ccscope.Controller`: `on_ack(now_ms, ack)` and optionally
//! `on_send(now_ms, seq, in_flight, after_timeout)`, `on_loss(now_ms, seq, send_time_ms, in_flight,
//! cause)`, `on_timeout(now_ms)`, plus attributes (or zero-argument methods) `cwnd`, `timeout_ms`
//! and `pacing_rate_mbps`. Decisions are re-read after every call.
//!
//! A Python controller is checked like a built-in one: an exception raised by a handler ends the
//! run and reaches the caller unchanged (its type and traceback), tagged with the flow, class,
//! handler and time (`ccscope_flow`, `ccscope_controller`, `ccscope_event`, `ccscope_time_ms`); a
//! window, timeout or pacing rate that is not a finite number >= 0 is a `ControllerError` naming
//! the class and the handler; a method named `on_*` that is not a handler (a misspelled `on_acks`)
//! is a `ControllerError` when the controller is built, since it would never be called.

use std::sync::{Arc, Mutex};

use ccscope_cc::{AckEvent, Controller, LossCause, LossEvent, SendEvent};
use ccscope_core::{Bandwidth, Dur, Time};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The most packets a Python controller may keep in flight: the bound every built-in controller keeps; a
/// larger window would queue that many packets in one burst.
const MAX_CWND: f64 = ccscope_cc::MAX_CWND as f64;
/// The shortest no-ACK timeout, ms: the floor of the built-in controllers' self-re-arming timers.
const MIN_TIMER_MS: f64 = ccscope_cc::params::MIN_TIMER_MS;

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
    /// The newest packet this ACK newly acknowledges, never resent (Linux `ca_rtt_us`); `rtt_ms`
    /// when there is none. A delayed ACK's `rtt_ms` (its echo) is a packet gap longer.
    pub ca_rtt_ms: f64,
    pub in_flight: u32,
    pub last_sent_seq: u64,
    /// Packets this ACK newly acknowledged, cumulatively or selectively (two for a delayed ACK).
    pub newly_acked: u32,
    /// It advanced SND.UNA (false for a duplicate ACK that only SACKs); true on datagrams.
    pub snd_una_advanced: bool,
    /// The reliable sender is in loss recovery.
    pub in_recovery: bool,
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

/// The handlers the simulator calls; any other `on_*` method is a mistake worth reporting.
pub const HANDLERS: [&str; 4] = ["on_ack", "on_loss", "on_send", "on_timeout"];

pub struct PyController {
    obj: Py<PyAny>,
    /// Flow index, class name and scenario label, for error messages.
    index: usize,
    class: String,
    label: String,
    /// Set by the first error: later calls are skipped (the run reports the error when it ends).
    failed: bool,
    cwnd: u32,
    timeout: Dur,
    pacing: Option<Bandwidth>,
    on_send: bool,
    on_loss: bool,
    on_timeout: bool,
    errors: ErrorSlot,
}

/// An attribute (or zero-argument method) as a number; `Err(Some(text))` when it is not a number.
fn read_attr(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Result<Option<f64>, String>> {
    let Ok(v) = obj.getattr(name) else {
        return Ok(Ok(None));
    };
    let v = if v.is_callable() { v.call0()? } else { v };
    if v.is_none() {
        return Ok(Ok(None));
    }
    Ok(v.extract::<f64>().map(Some).map_err(|_| {
        v.repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "?".into())
    }))
}

/// Record where a handler's exception came from on the exception itself (and as a note, so a
/// traceback shows it), keeping its type and traceback.
fn tag(py: Python<'_>, e: &PyErr, index: usize, class: &str, event: &str, now_ms: f64) {
    let v = e.value(py);
    let _ = v.setattr("ccscope_flow", index);
    let _ = v.setattr("ccscope_controller", class);
    let _ = v.setattr("ccscope_event", event);
    let _ = v.setattr("ccscope_time_ms", now_ms);
    if v.hasattr("add_note").unwrap_or(false) {
        let _ = v.call_method1(
            "add_note",
            (format!(
                "raised by flow {index}'s controller {class} in {event} at t = {now_ms:.3} ms"
            ),),
        );
    }
}

impl PyController {
    pub fn build(
        py: Python<'_>,
        factory: &PyObject,
        index: usize,
        params: &toml::Table,
        errors: ErrorSlot,
        label: &str,
    ) -> PyResult<Self> {
        let kwargs = PyDict::new(py);
        for (k, v) in params {
            kwargs.set_item(k, crate::convert::toml_to_py(py, v)?)?;
        }
        let obj = factory.call1(py, (index, kwargs))?;
        let b = obj.bind(py);
        let class = b.get_type().name()?.to_string();
        if !b.hasattr("on_ack")? {
            return Err(crate::ControllerError::new_err(format!(
                "{class} needs an on_ack(now_ms, ack) method"
            )));
        }
        let mut unknown = Vec::new();
        for name in b.dir()?.iter() {
            let name: String = name.extract()?;
            if name.starts_with("on_")
                && !HANDLERS.contains(&name.as_str())
                && b.getattr(name.as_str())
                    .map(|a| a.is_callable())
                    .unwrap_or(false)
            {
                unknown.push(name);
            }
        }
        if !unknown.is_empty() {
            return Err(crate::ControllerError::new_err(format!(
                "{class} has {} {} that ccscope never calls (the handlers are {}); rename {}, or give it a name not starting with on_",
                if unknown.len() == 1 { "a method" } else { "methods" },
                unknown.join(", "),
                HANDLERS.join(", "),
                if unknown.len() == 1 { "it" } else { "them" },
            )));
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
            index,
            class,
            label: label.to_string(),
            failed: false,
            on_send: has("on_send"),
            on_loss: has("on_loss"),
            on_timeout: has("on_timeout"),
            obj: obj.clone_ref(py),
            cwnd: 1,
            timeout: Dur::from_ms(1000),
            pacing: None,
            errors,
        };
        c.refresh(b, "__init__", None)?;
        Ok(c)
    }

    /// A decision that is not a finite number >= 0, as a ControllerError naming class and handler.
    fn bad_value(&self, attr: &str, value: &str, event: &str, now_ms: Option<f64>) -> PyErr {
        let when = match now_ms {
            Some(t) => format!("after {event} at t = {t:.3} ms"),
            None => format!("after {event}"),
        };
        crate::ControllerError::new_err(format!(
            "{}: `{attr}` = {value} {when}: must be a finite number >= 0",
            self.who(now_ms)
        ))
    }

    /// Who failed: the class, and while running also the scenario and flow (a failure while
    /// building gets the scenario and flow field from the caller).
    fn who(&self, now_ms: Option<f64>) -> String {
        match now_ms {
            Some(_) => format!("{}: flow {} ({})", self.label, self.index, self.class),
            None => self.class.clone(),
        }
    }

    /// A decision read from the object: a number, finite and >= 0, or an error.
    fn checked(
        &self,
        b: &Bound<'_, PyAny>,
        attr: &str,
        event: &str,
        now_ms: Option<f64>,
    ) -> PyResult<Option<f64>> {
        match read_attr(b, attr)? {
            Ok(Some(v)) if !(v.is_finite() && v >= 0.0) => {
                Err(self.bad_value(attr, &v.to_string(), event, now_ms))
            }
            Ok(v) => Ok(v),
            Err(text) => Err(self.bad_value(attr, &text, event, now_ms)),
        }
    }

    fn refresh(&mut self, b: &Bound<'_, PyAny>, event: &str, now_ms: Option<f64>) -> PyResult<()> {
        let w = self.checked(b, "cwnd", event, now_ms)?.ok_or_else(|| {
            crate::ControllerError::new_err(format!(
                "{}: a Python controller needs a `cwnd` attribute or method",
                self.who(now_ms)
            ))
        })?;
        if w > MAX_CWND {
            return Err(crate::ControllerError::new_err(format!(
                "{}: `cwnd` = {w} {}: must be a finite number >= 0 and at most {MAX_CWND} packets",
                self.who(now_ms),
                match now_ms {
                    Some(t) => format!("after {event} at t = {t:.3} ms"),
                    None => format!("after {event}"),
                },
            )));
        }
        self.cwnd = w as u32;
        if let Some(t) = self.checked(b, "timeout_ms", event, now_ms)? {
            // The no-ACK timer re-arms itself: at least 1 us, as the built-in controllers' (a 1 ns one
            // fired a billion times per simulated second).
            if t > 0.0 && t < MIN_TIMER_MS {
                let when = match now_ms {
                    Some(x) => format!("after {event} at t = {x:.3} ms"),
                    None => format!("after {event}"),
                };
                return Err(crate::ControllerError::new_err(format!(
                    "{}: `timeout_ms` = {t} {when}: must be at least {MIN_TIMER_MS} ms (1 us, the shortest timer)",
                    self.who(now_ms)
                )));
            }
            if t > 0.0 {
                self.timeout = Dur::from_ms_f64(t);
            }
        }
        // A rate of 0 means no pacing, as None does.
        self.pacing = self
            .checked(b, "pacing_rate_mbps", event, now_ms)?
            .filter(|r| *r > 0.0)
            .map(Bandwidth::from_mbps);
        Ok(())
    }

    fn call(
        &mut self,
        event: &'static str,
        now: Time,
        f: impl FnOnce(Python<'_>, &Bound<'_, PyAny>) -> PyResult<()>,
    ) {
        if self.failed {
            return;
        }
        Python::with_gil(|py| {
            let b = self.obj.bind(py).clone();
            let outcome = match f(py, &b) {
                Err(e) => {
                    tag(py, &e, self.index, &self.class, event, ms(now));
                    Err(e)
                }
                Ok(()) => self.refresh(&b, event, Some(ms(now))),
            };
            if let Err(e) = outcome {
                self.failed = true;
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
            self.call("on_send", now, |_, b| {
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
            ca_rtt_ms: ev.ca_rtt.as_ms_f64(),
            in_flight: ev.in_flight,
            last_sent_seq: ev.last_sent_seq,
            newly_acked: ev.newly_acked,
            snd_una_advanced: ev.snd_una_advanced,
            in_recovery: ev.in_recovery,
            rate_delivered: ev.rate.map(|r| r.delivered),
            rate_interval_ms: ev.rate.map(|r| r.interval.as_ms_f64()),
            delivery_rate_pps: ev.rate.map(|r| r.rate_pps()),
            rate_prior_delivered: ev.rate.map(|r| r.prior_delivered),
            delivered_total: ev.rate.map(|r| r.delivered_total),
            rate_rtt_ms: ev.rate.map(|r| r.rtt.as_ms_f64()),
            rate_app_limited: ev.rate.map(|r| r.is_app_limited),
        };
        self.call("on_ack", now, |py, b| {
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
            self.call("on_loss", now, |_, b| {
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
            self.call("on_timeout", now, |_, b| {
                b.call_method1("on_timeout", (ms(now),)).map(|_| ())
            });
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

    /// Yes: a Python controller may read any field of its ACKs.
    fn wants_rate_sample(&self) -> bool {
        true
    }
    fn state_name(&self) -> &'static str {
        "python"
    }
}

/// Tag an exception raised while building flow `index`'s controller (see [`tag`]); the facade may
/// have named the class already.
pub fn tag_build(py: Python<'_>, e: &PyErr, index: usize) {
    let v = e.value(py);
    let set = |k: &str, x: PyObject| {
        if !v.hasattr(k).unwrap_or(true) {
            let _ = v.setattr(k, x);
        }
    };
    let Ok(i) = index.into_pyobject(py);
    set("ccscope_flow", i.into_any().unbind());
    let Ok(s) = "__init__".into_pyobject(py);
    set("ccscope_event", s.into_any().unbind());
}
