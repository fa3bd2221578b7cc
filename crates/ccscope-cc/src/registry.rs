//! Controllers by stable name, built from typed parameters whose defaults are the papers' values, and
//! `AnyController`, the enum every built-in is dispatched through (both from the one list below).

use crate::delay::{aiad, copa, ledbat, mimd, queue_gradient, timely, vegas, verus};
use crate::model::{bbr, bbr3, markov, sprout};
use crate::params::defaults_of;
pub use crate::params::{invalid, parse_params, ParamError, ParamSpec, Params};
use crate::rate::{lied, sac, vivace};
use crate::window::{aimd, cubic, fixed, newreno, sctp};
use crate::{
    AckEvent, CongestionEvent, Controller, DelayWindowSample, LossEvent, PacketAcked, SendEvent,
};
use ccscope_core::{Bandwidth, Dur, Time};

/// A registered controller.
pub struct ControllerInfo {
    pub name: &'static str,
    /// The transport a flow gets unless its scenario says otherwise.
    pub transport: crate::Transport,
    /// On the datagram transport, the sender loop a flow gets unless its scenario sets
    /// `datagram_mode` (`None`: the transport's standard one; Copa: `ctcp`, genericCC's own sender).
    pub datagram_mode: Option<&'static str>,
    /// Parameters that the `datagram_mode` sender fixes to its own value: on that sender (set or by
    /// default) a scenario may give only that value.
    pub fixed_by_mode: &'static [FixedByMode],
    pub summary: &'static str,
    pub params: &'static [ParamSpec],
    /// Parameter values a flow's `stack` sets unless the flow gives them (`Params::STACK`).
    pub stack_defaults: &'static [crate::params::StackDefault],
    pub build: fn(&toml::Table) -> Result<AnyController, ParamError>,
    pub defaults: fn() -> toml::Table,
    /// `Params::check_round_trip` of the parameters in the table.
    pub check_round_trip: fn(&toml::Table, f64) -> Result<(), ParamError>,
    /// `Params::state_bytes` of the parameters in the table.
    pub state_bytes: fn(&toml::Table) -> Result<u64, ParamError>,
}

/// A parameter a datagram sender mode fixes: the sender has its own value, which the controller's
/// must equal there or the two act apart.
#[derive(Debug)]
pub struct FixedByMode {
    pub param: &'static str,
    pub value: f64,
    /// What the sender does with the value, `{}` standing for it (the error's reason).
    pub rule: &'static str,
}

impl FixedByMode {
    /// `Err(why)` unless `given` (the scenario's value) is the sender's, an integer or a float.
    pub fn check(&self, mode: &str, given: &toml::Value) -> Result<(), String> {
        let v = given.as_float().or(given.as_integer().map(|i| i as f64));
        if v == Some(self.value) {
            return Ok(());
        }
        let value = self.value;
        let rule = self.rule.replace("{}", &value.to_string());
        Err(format!("the {mode} sender {rule}: give {value}, or another sender (datagram_mode = \"standard\" or transport = \"reliable\")"))
    }
}

/// genericCC's ctcp sender, Copa's default, restarts after its own 2 s without an ACK (ctcp.hh 206;
/// markoviancc has no such parameter): Copa's restart silence there must agree.
const COPA_ON_CTCP: &[FixedByMode] = &[FixedByMode {
    param: "restart_after_s",
    value: 2.0,
    rule: "restarts after its fixed {} s without an ACK (genericCC ctcp.hh)",
}];

macro_rules! entry {
    ($module:ident, $ty:ident, $summary:literal) => {
        entry!($module, $ty, $summary, Datagram)
    };
    ($module:ident, $ty:ident, $summary:literal, $transport:ident) => {
        entry!(@with $module, $ty, $summary, $transport, None, &[])
    };
    ($module:ident, $ty:ident, $summary:literal, $transport:ident($mode:literal)) => {
        entry!(@with $module, $ty, $summary, $transport, Some($mode), &[])
    };
    ($module:ident, $ty:ident, $summary:literal, $transport:ident($mode:literal, $fixed:ident)) => {
        entry!(@with $module, $ty, $summary, $transport, Some($mode), $fixed)
    };
    (@with $module:ident, $ty:ident, $summary:literal, $transport:ident, $mode:expr, $fixed:expr) => {
        ControllerInfo {
            name: stringify!($module),
            transport: crate::Transport::$transport,
            datagram_mode: $mode,
            fixed_by_mode: $fixed,
            summary: $summary,
            params: <$module::Params as Params>::SPEC,
            stack_defaults: <$module::Params as Params>::STACK,
            build: |t| {
                Ok(AnyController::$ty(Box::new($module::$ty::new(
                    parse_params(stringify!($module), t)?,
                ))))
            },
            defaults: defaults_of::<$module::Params>,
            check_round_trip: |t, rtt_ms| {
                parse_params::<$module::Params>(stringify!($module), t)?.check_round_trip(rtt_ms)
            },
            state_bytes: |t| {
                Ok(parse_params::<$module::Params>(stringify!($module), t)?.state_bytes())
            },
        }
    };
}

/// `$e` evaluated with `$c` bound to whichever controller `$any` holds, each arm a static call.
macro_rules! dispatch {
    ($any:expr, [$($ty:ident),*], $c:ident => $e:expr) => {
        match $any {
            $(AnyController::$ty($c) => $e,)*
            AnyController::Boxed($c) => $e,
        }
    };
}

/// The one list of built-in controllers: it declares both [`CONTROLLERS`] and [`AnyController`].
macro_rules! controllers {
    ($(($module:ident, $ty:ident, $summary:literal $(, $transport:ident $(($mode:literal $(, $fixed:ident)?))?)?)),* $(,)?) => {
        /// Every built-in controller.
        pub const CONTROLLERS: &[ControllerInfo] = &[
            $(entry!($module, $ty, $summary $(, $transport $(($mode $(, $fixed)?))?)?)),*
        ];

        /// Any controller: one variant per built-in (dispatched by `match`, so the transport's per-ACK
        /// calls are static and inline) and `Boxed` for the rest (Python controllers, wrappers).
        /// Each variant is boxed so the enum stays 24 bytes (a tag beside `Boxed`'s fat pointer) in the
        /// sender's hot fields, where the built-ins themselves take 16 to 1,472 bytes.
        pub enum AnyController {
            $($ty(Box<$module::$ty>),)*
            Boxed(Box<dyn Controller>),
        }

        // Always inlined: the call sites then hold the `match`, and a built-in's small handlers
        // (`cwnd`, `pacing_rate`) inline into its arm.
        impl Controller for AnyController {
            #[inline(always)]
            fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
                dispatch!(self, [$($ty),*], c => c.on_send(now, ev))
            }
            #[inline(always)]
            fn on_ack(&mut self, now: Time, ev: &AckEvent) {
                dispatch!(self, [$($ty),*], c => c.on_ack(now, ev))
            }
            #[inline(always)]
            fn on_packet_acked(&mut self, now: Time, ev: &PacketAcked) {
                dispatch!(self, [$($ty),*], c => c.on_packet_acked(now, ev))
            }
            #[inline(always)]
            fn on_loss(&mut self, now: Time, ev: &LossEvent) {
                dispatch!(self, [$($ty),*], c => c.on_loss(now, ev))
            }
            #[inline(always)]
            fn on_congestion_event(&mut self, now: Time, ev: &CongestionEvent) {
                dispatch!(self, [$($ty),*], c => c.on_congestion_event(now, ev))
            }
            #[inline(always)]
            fn on_recovery_exit(&mut self, now: Time) {
                dispatch!(self, [$($ty),*], c => c.on_recovery_exit(now))
            }
            #[inline(always)]
            fn on_rto(&mut self, now: Time) {
                dispatch!(self, [$($ty),*], c => c.on_rto(now))
            }
            #[inline(always)]
            fn on_rto_repeated(&mut self, now: Time) {
                dispatch!(self, [$($ty),*], c => c.on_rto_repeated(now))
            }
            #[inline(always)]
            fn on_undo(&mut self, now: Time) {
                dispatch!(self, [$($ty),*], c => c.on_undo(now))
            }
            #[inline(always)]
            fn sets_window_in_recovery(&self) -> bool {
                dispatch!(self, [$($ty),*], c => c.sets_window_in_recovery())
            }
            #[inline(always)]
            fn on_timeout(&mut self, now: Time) {
                dispatch!(self, [$($ty),*], c => c.on_timeout(now))
            }
            #[inline(always)]
            fn on_timer(&mut self, now: Time) {
                dispatch!(self, [$($ty),*], c => c.on_timer(now))
            }
            #[inline(always)]
            fn next_timer(&self) -> Option<Time> {
                dispatch!(self, [$($ty),*], c => c.next_timer())
            }
            #[inline(always)]
            fn cwnd(&self) -> u32 {
                dispatch!(self, [$($ty),*], c => c.cwnd())
            }
            #[inline(always)]
            fn pacing_rate(&self) -> Option<Bandwidth> {
                dispatch!(self, [$($ty),*], c => c.pacing_rate())
            }
            #[inline(always)]
            fn timeout(&self) -> Dur {
                dispatch!(self, [$($ty),*], c => c.timeout())
            }
            fn take_samples(&mut self) -> Vec<DelayWindowSample> {
                dispatch!(self, [$($ty),*], c => c.take_samples())
            }
            fn state_name(&self) -> &'static str {
                dispatch!(self, [$($ty),*], c => c.state_name())
            }
            fn wants_host_feedback(&self) -> bool {
                dispatch!(self, [$($ty),*], c => c.wants_host_feedback())
            }
            fn wants_packet_acks(&self) -> bool {
                dispatch!(self, [$($ty),*], c => c.wants_packet_acks())
            }
            fn wants_rate_sample(&self) -> bool {
                dispatch!(self, [$($ty),*], c => c.wants_rate_sample())
            }
            fn counters(&self) -> Vec<(&'static str, u64)> {
                dispatch!(self, [$($ty),*], c => c.counters())
            }
        }

        impl AnyController {
            /// The same controller behind `Box<dyn Controller>` (the built-ins' dynamic dispatch,
            /// for tests that compare it with the enum's).
            pub fn into_dyn(self) -> AnyController {
                match self {
                    $(AnyController::$ty(c) => AnyController::Boxed(c),)*
                    boxed => boxed,
                }
            }

            /// Hands the controller inside to `v` as its own type (a built-in unboxed, `Boxed` as the
            /// box), so a test can call it directly beside the enum that forwards to it.
            #[cfg(test)]
            pub(crate) fn visit_concrete<V: ConcreteVisitor>(self, v: V) -> V::Output {
                match self {
                    $(AnyController::$ty(c) => v.visit(*c),)*
                    AnyController::Boxed(c) => v.visit(c),
                }
            }
        }
    };
}

/// What `AnyController::visit_concrete` calls with the controller's own type.
#[cfg(test)]
pub(crate) trait ConcreteVisitor {
    type Output;
    fn visit<C: Controller + 'static>(self, c: C) -> Self::Output;
}

impl AnyController {
    /// A controller that is not built in (written in Python, or a wrapper), called through its box.
    pub fn boxed(c: impl Controller + 'static) -> AnyController {
        AnyController::Boxed(Box::new(c))
    }
}

controllers![
    (fixed, Fixed, "fixed window (paper 001 §1)"),
    (aimd, Aimd, "AIMD with a delay trigger (paper 001 §2, §3.1)"),
    (aiad, Aiad, "additive increase, additive decrease on delay (paper 001 §3.2)"),
    (mimd, Mimd, "multiplicative increase and decrease on delay (paper 001 §3.3)"),
    (timely, Timely, "TIMELY delay gradient (paper 001 §4.2, Algorithm 1)"),
    (queue_gradient, QueueGradient, "delay thresholds with a queue-occupancy gradient (paper 001 §4.3)"),
    (newreno, NewReno, "TCP NewReno (RFC 5681, RFC 6582)", Reliable),
    (cubic, Cubic, "TCP Cubic (RFC 9438)", Reliable),
    (sctp, Sctp, "SCTP per-destination congestion control (RFC 4960 §7.2, paper 002 §3.2)", Cmt),
    (vegas, Vegas, "TCP Vegas (Brakmo and Peterson 1995)", Reliable),
    (bbr, Bbr, "BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00, Linux tcp_bbr.c)", Reliable),
    (ledbat, Ledbat, "LEDBAT scavenger (RFC 6817)", Reliable),
    (verus, Verus, "Verus delay-profile control (paper 004; yzaki/verus reference)"),
    (sprout, Sprout, "Sprout-style stochastic forecasts (Winstein et al. 2013; keithw/sprout)"),
    (markov, Markov, "guided random walk in a trained (delay, window) Markov chain (paper 000 §3.2, §5.1)"),
    (lied, Lied, "generic rate-based linear increase/exponential decrease on gamma_k (paper 003 §3.1, eqs. 3-4)"),
    (sac, Sac, "selective aggressiveness control over LIED with an on-line CondProb table (paper 003 §3.2, App. A.2)"),
    (copa, Copa, "Copa delay-based control with default and competitive modes (Arun and Balakrishnan, NSDI 2018)", Datagram("ctcp", COPA_ON_CTCP)),
    (vivace, Vivace, "PCC Vivace online-learning rate control with the latency utility (Dong et al., NSDI 2018)", Reliable),
    (bbr3, Bbr3, "BBRv3 (draft-ietf-ccwg-bbr, google/bbr v3 tcp_bbr.c)", Reliable),
];

/// Build the controller `name` with parameter overrides `params`.
pub fn build(name: &str, params: &toml::Table) -> Result<AnyController, ParamError> {
    let info = find(name)?;
    (info.build)(params)
}

/// The registry entry for `name`.
pub fn find(name: &str) -> Result<&'static ControllerInfo, ParamError> {
    CONTROLLERS
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(|| ParamError::UnknownController {
            name: name.to_string(),
            known: CONTROLLERS
                .iter()
                .map(|c| c.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// (name, default as TOML text, unit, doc) for each parameter of `name`.
pub fn describe(name: &str) -> Result<Vec<(String, String, String, String)>, ParamError> {
    let info = find(name)?;
    let defaults = (info.defaults)();
    Ok(info
        .params
        .iter()
        .map(|s| {
            let d = defaults
                .get(s.name)
                .map(|v| v.to_string())
                .unwrap_or_else(|| "none".into());
            (s.name.to_string(), d, s.unit.to_string(), s.doc.to_string())
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().expect("test TOML parses")
    }

    fn build_err(name: &str, params: &str) -> ParamError {
        build(name, &table(params))
            .err()
            .expect("build should fail")
    }

    #[test]
    fn every_controller_builds_with_its_defaults() {
        for info in CONTROLLERS {
            assert!((info.build)(&toml::Table::new()).is_ok(), "{}", info.name);
            assert!(
                build(info.name, &(info.defaults)()).is_ok(),
                "{} rejects its own defaults",
                info.name
            );
        }
    }

    #[test]
    fn a_self_rearming_timer_shorter_than_a_microsecond_is_refused_in_every_controller() {
        // A 1 ns no-ACK timeout sent a packet on every expiry: 1e9 per simulated second.
        let timers = [
            "timeout_ms",
            "epoch_ms",
            "tick_ms",
            "tau_floor_ms",
            "profile_refit_ms",
        ];
        let mut checked = 0;
        for info in CONTROLLERS {
            for spec in info.params.iter().filter(|p| {
                timers.contains(&p.name) || (p.name.ends_with("_timeout_ms") && p.unit == "ms")
            }) {
                let e = build_err(info.name, &format!("{} = 1e-6", spec.name));
                assert!(
                    e.to_string().contains("the shortest timer"),
                    "{} {}: {e}",
                    info.name,
                    spec.name
                );
                checked += 1;
            }
        }
        assert!(checked >= 12, "{checked} timers checked");
    }

    #[test]
    fn a_name_with_a_line_break_is_shown_escaped_so_the_error_stays_one_line() {
        let e = build("fi\nxed", &toml::Table::new())
            .err()
            .expect("unknown");
        assert_eq!(e.to_string().lines().count(), 1, "{e}");
        assert!(
            e.to_string().contains("`fi\\nxed`") && e.to_string().contains("fixed"),
            "{e}"
        );
        let e = build_err("fixed", "\"win\\ndow\" = 3");
        assert_eq!(e.to_string().lines().count(), 1, "{e}");
        assert!(e.to_string().contains("`win\\ndow`"), "{e}");
    }

    #[test]
    fn a_tab_in_a_name_is_shown_escaped_and_a_quote_as_typed() {
        let e = build("fi\txed", &toml::Table::new())
            .err()
            .expect("unknown");
        assert!(e.to_string().contains("`fi\\txed`"), "{e}");
        let e = build_err("fixed", "'it\"s' = 3");
        assert!(e.to_string().contains("`it\"s`"), "{e}");
    }

    #[test]
    fn a_time_beyond_the_longest_run_or_a_rate_beyond_any_link_is_refused_naming_the_parameter() {
        for (name, params, key, reason) in [
            (
                "lied",
                "tau_floor_ms = 1e300",
                "tau_floor_ms",
                "1e300 ms is beyond 1e10 ms (the longest run)",
            ),
            (
                "sac",
                "t2_s = 1e300",
                "t2_s",
                "1e300 s is beyond 1e7 s (the longest run)",
            ),
            (
                "lied",
                "max_rate_mbps = 1e300",
                "max_rate_mbps",
                "1e300 Mbit/s is beyond 1e9 Mbit/s (the fastest link)",
            ),
            (
                "lied",
                "delta_pkts = 1e300",
                "delta_pkts",
                "1e300 packets/tau is beyond 4.294967295e9 packets/tau (the largest window)",
            ),
        ] {
            let e = build_err(name, params);
            assert_eq!(e.key(), Some(key), "{e}");
            assert_eq!(e.to_string(), format!("parameter `{key}`: {reason}"));
        }
        // The longest run itself, a link's largest rate and a window of u32::MAX packets are fine.
        assert!(build("lied", &table("tau_floor_ms = 1e10")).is_ok());
        assert!(build("lied", &table("max_rate_mbps = 1e9")).is_ok());
        assert!(build("lied", &table("delta_pkts = 4294967295.0")).is_ok());
    }

    #[test]
    fn a_window_beyond_the_bound_every_controller_keeps_is_refused_naming_the_parameter() {
        // `fixed` with window = 4294967295 passed the u32 bound and queued 4e9 packets in one burst.
        for (name, params, key) in [
            ("fixed", "window = 4294967295", "window"),
            ("newreno", "initial_window = 10000001", "initial_window"),
            ("aimd", "min_window = 1e8", "min_window"),
            ("aimd", "additive_increase = 4e9", "additive_increase"),
            ("lied", "window_pkts = 1e8", "window_pkts"),
        ] {
            let e = build_err(name, params);
            assert_eq!(e.key(), Some(key), "{e}");
            assert!(e.to_string().contains("is beyond 1e7 packets"), "{e}");
        }
        assert!(build("fixed", &table("window = 10000000")).is_ok());
        // A slow-start threshold may stay arbitrarily high (RFC 5681 §3.1): it never is the window.
        assert!(build("newreno", &table("initial_ssthresh = 4294967295")).is_ok());
    }

    #[test]
    fn every_window_parameter_of_every_controller_is_bounded_by_max_cwnd() {
        let over = (crate::MAX_CWND as f64 + 1.0).to_string();
        for info in CONTROLLERS {
            for s in info.params.iter().filter(|s| {
                matches!(s.unit, "packets" | "packets/RTT") && !s.name.contains("ssthresh")
            }) {
                let e = build_err(info.name, &format!("{} = {over}", s.name));
                assert_eq!(e.key(), Some(s.name), "{}: {e}", info.name);
            }
        }
    }

    #[test]
    fn every_spec_entry_has_a_default_and_every_default_a_spec_entry() {
        for info in CONTROLLERS {
            let defaults = (info.defaults)();
            let mut spec: Vec<&str> = info.params.iter().map(|s| s.name).collect();
            let mut keys: Vec<&str> = defaults.keys().map(String::as_str).collect();
            spec.sort_unstable();
            keys.sort_unstable();
            assert_eq!(spec, keys, "{}", info.name);
        }
    }

    #[test]
    fn copa_on_the_ctcp_sender_takes_only_the_senders_restart_silence() {
        let copa = find("copa").expect("copa is registered");
        assert_eq!(copa.datagram_mode, Some("ctcp"));
        let [fixed] = copa.fixed_by_mode else {
            panic!("{:?}", copa.fixed_by_mode)
        };
        assert_eq!((fixed.param, fixed.value), ("restart_after_s", 2.0));
        for ok in [toml::Value::Integer(2), toml::Value::Float(2.0)] {
            assert_eq!(fixed.check("ctcp", &ok), Ok(()), "{ok}");
        }
        assert_eq!(
            fixed.check("ctcp", &toml::Value::Integer(5)),
            Err("the ctcp sender restarts after its fixed 2 s without an ACK (genericCC ctcp.hh): give 2, or another sender (datagram_mode = \"standard\" or transport = \"reliable\")".into())
        );
    }

    #[test]
    fn a_parameter_fixed_by_a_sender_is_the_controllers_own_with_that_value_as_default() {
        for info in CONTROLLERS {
            if info.fixed_by_mode.is_empty() {
                continue;
            }
            assert!(
                info.datagram_mode.is_some(),
                "{}: fixed by which sender?",
                info.name
            );
            let defaults = (info.defaults)();
            for f in info.fixed_by_mode {
                let default = defaults.get(f.param);
                assert!(default.is_some(), "{}: no parameter {}", info.name, f.param);
                assert_eq!(
                    f.check("any", default.unwrap()),
                    Ok(()),
                    "{}.{}",
                    info.name,
                    f.param
                );
                assert!(
                    f.rule.contains("{}"),
                    "{}.{}: {}",
                    info.name,
                    f.param,
                    f.rule
                );
            }
        }
    }

    #[test]
    fn unknown_controller_error_lists_the_known_names() {
        let e = build_err("reno2000", "");
        let ParamError::UnknownController { name, known } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(name, "reno2000");
        for info in CONTROLLERS {
            assert!(
                known.split(", ").any(|k| k == info.name),
                "{known} lacks {}",
                info.name
            );
        }
        assert_eq!(e.key(), None);
    }

    #[test]
    fn unknown_parameter_error_names_the_key() {
        let e = build_err("timely", "gamma = 0.5");
        let ParamError::UnknownParam {
            controller,
            key,
            known,
        } = &e
        else {
            panic!("{e:?}")
        };
        assert_eq!((controller.as_str(), key.as_str()), ("timely", "gamma"));
        assert!(
            known.contains("alpha") && known.contains("t_high_ms"),
            "{known}"
        );
        assert_eq!(e.key(), Some("gamma"));
    }

    #[test]
    fn wrong_type_is_invalid_for_that_key() {
        let e = build_err("fixed", "window = \"x\"");
        assert!(
            matches!(&e, ParamError::Invalid { key, .. } if key == "window"),
            "{e:?}"
        );
        // The other keys parse; the error still points at the bad one.
        let e = build_err("aimd", "additive_increase = 1.0\ndecrease_on_loss = 3");
        assert_eq!(e.key(), Some("decrease_on_loss"));
    }

    #[test]
    fn validate_failure_is_invalid_for_that_key() {
        let e = build_err("aimd", "decrease_factor = 1.5");
        assert!(
            matches!(&e, ParamError::Invalid { key, .. } if key == "decrease_factor"),
            "{e:?}"
        );
        assert_eq!(
            build_err("timely", "t_low_ms = 200.0").key(),
            Some("t_high_ms")
        );
        assert_eq!(
            build_err("mimd", "increase_factor = 0.5").key(),
            Some("increase_factor")
        );
        assert_eq!(
            build_err("aiad", "additive_decrease = -1.0").key(),
            Some("additive_decrease")
        );
        assert_eq!(
            build_err("queue_gradient", "beta = 2.0").key(),
            Some("beta")
        );
    }

    #[test]
    fn overrides_reach_the_controller() {
        let cc = build("fixed", &table("window = 7")).expect("builds");
        assert_eq!(cc.cwnd(), 7);
        let cc = build("timely", &table("initial_rate = 20.0")).expect("builds");
        assert_eq!(cc.cwnd(), 20);
    }

    #[test]
    fn describe_timely_lists_every_param_with_its_default() {
        let rows = describe("timely").expect("timely is registered");
        let expected = [
            ("alpha", "0.8"),
            ("beta", "0.3"),
            ("delta", "0.25"),
            ("t_low_ms", "60.0"),
            ("t_high_ms", "150.0"),
            ("min_rtt_ms", "50.0"),
            ("initial_rate", "50.0"),
            ("hai", "false"),
            ("hai_threshold", "5"),
            ("rate_floor", "1.0"),
            ("max_window", "100000.0"),
            ("timeout_ms", "1000.0"),
        ];
        let got: Vec<(&str, &str)> = rows
            .iter()
            .map(|(n, d, _, _)| (n.as_str(), d.as_str()))
            .collect();
        assert_eq!(got, expected);
        assert!(rows
            .iter()
            .all(|(_, _, unit, doc)| !unit.is_empty() && !doc.is_empty()));
    }

    #[test]
    fn a_multiple_of_a_round_trip_beyond_the_longest_run_in_1_ms_round_trips_is_refused() {
        // vivace mi_rtts = 1e300 never ended its first monitor interval.
        for info in CONTROLLERS {
            for s in info
                .params
                .iter()
                .filter(|s| matches!(s.unit, "srtt" | "min RTTs" | "RTTs" | "slowdowns"))
            {
                let e = build_err(info.name, &format!("{} = 1e300", s.name));
                assert_eq!(e.key(), Some(s.name), "{}: {e}", info.name);
                assert!(e.to_string().contains("1e10"), "{e}");
            }
        }
        assert!(build_err("vivace", "mi_rtts = 1e11")
            .to_string()
            .contains("1 ms round trips"));
        assert!(build("vivace", &table("mi_rtts = 1e10")).is_ok());
    }

    #[test]
    fn a_float_given_for_an_integer_is_quoted_short_not_in_301_digits() {
        let e = build_err("timely", "hai_threshold = 1e300").to_string();
        assert!(e.contains("floating point `1e300`, expected u32"), "{e}");
        let e = build_err("timely", "hai_threshold = 2.5").to_string();
        assert!(e.contains("floating point `2.5`"), "{e}");
    }

    #[test]
    fn every_time_parameter_of_every_controller_is_refused_below_the_clocks_nanosecond() {
        // fixed's timeout_ms = 1e-12 was 0 ns: its timer fired forever at one instant and the run hung.
        for info in CONTROLLERS {
            for s in info.params.iter().filter(|s| matches!(s.unit, "ms" | "s")) {
                let e = build_err(info.name, &format!("{} = 1e-12", s.name));
                assert_eq!(e.key(), Some(s.name), "{}: {e}", info.name);
                assert!(
                    e.to_string()
                        .ends_with("is below 1 ns, the clock's resolution"),
                    "{e}"
                );
            }
        }
        assert!(build("fixed", &table("timeout_ms = 1e-3")).is_ok());
    }
}
