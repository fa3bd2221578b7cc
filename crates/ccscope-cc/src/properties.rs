//! One property harness for every registered controller (STYLE.md §14): random operation sequences
//! through a boxed controller built with its default parameters, checking invariants after each step.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ccscope_core::{Dur, Time};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::registry::{ControllerInfo, CONTROLLERS};
use crate::testing::Script;
use crate::{AnyController, Controller, LossCause};

/// No controller may ask for more than this many packets in flight.
const MAX_CWND: u32 = 10_000_000;
/// One `Fill` sends at most this many packets, so a huge window cannot stall the run.
const MAX_FILL: usize = 64;

#[derive(Clone, Debug)]
enum Op {
    /// Send this many packets whatever the window says.
    Send(usize),
    /// Send until the window is full (at most `MAX_FILL`).
    Fill,
    /// ACK the oldest packet in flight with this RTT.
    Ack(Dur),
    /// Declare the oldest packet lost.
    Lose(LossCause),
    /// Move the clock forward.
    Advance(Dur),
    /// Jump to the controller's timer, if it wants one within 10 s.
    Timer,
    /// The flow's no-ACK timeout fired: one packet goes out regardless of the window.
    Timeout,
    /// The reliable transport detects a loss: a congestion event (outside recovery), then the oldest is lost.
    Congestion(LossCause),
    /// The recovery point was cumulatively ACKed (when in recovery).
    RecoveryExit,
    /// The retransmission timer fired: the whole flight is lost, then `on_rto`.
    Rto,
    /// The timer fired again with nothing acknowledged since (`on_rto_repeated`).
    RtoRepeated,
    /// The transport found the last timeout spurious (F-RTO): `on_undo`.
    Undo,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (1usize..=16).prop_map(Op::Send),
        2 => Just(Op::Fill),
        // Most RTTs near the thresholds (60-150 ms), the rest anywhere in 1..2000 ms.
        3 => (1u64..=200).prop_map(|ms| Op::Ack(Dur::from_ms(ms))),
        2 => (1u64..=2000).prop_map(|ms| Op::Ack(Dur::from_ms(ms))),
        1 => prop_oneof![Just(LossCause::Reordering), Just(LossCause::Timeout)].prop_map(Op::Lose),
        1 => (0u64..=500).prop_map(|ms| Op::Advance(Dur::from_ms(ms))),
        1 => Just(Op::Timer),
        1 => Just(Op::Timeout),
        1 => prop_oneof![Just(LossCause::Reordering), Just(LossCause::Timeout)].prop_map(Op::Congestion),
        1 => Just(Op::RecoveryExit),
        1 => Just(Op::Rto),
        1 => Just(Op::RtoRepeated),
        1 => Just(Op::Undo),
    ]
}

/// The smallest window the controller promises with default parameters: fixed's may be 0.
fn cwnd_floor(info: &ControllerInfo) -> u32 {
    if info.name == "fixed" {
        let window = (info.defaults)()
            .get("window")
            .and_then(|v| v.as_integer())
            .unwrap_or(0);
        return window.clamp(0, 1) as u32;
    }
    1
}

fn check(
    info: &ControllerInfo,
    s: &Script<AnyController>,
    model_in_flight: usize,
    prev_now: Time,
    step: usize,
) -> Result<(), TestCaseError> {
    let name = info.name;
    let cwnd = s.cc.cwnd();
    prop_assert!(
        cwnd <= MAX_CWND,
        "{name}: cwnd {cwnd} > {MAX_CWND} after op {step}"
    );
    let floor = cwnd_floor(info);
    prop_assert!(
        cwnd >= floor,
        "{name}: cwnd {cwnd} < {floor} after op {step}"
    );
    prop_assert!(
        s.now >= prev_now,
        "{name}: time went back from {prev_now} to {} at op {step}",
        s.now
    );
    prop_assert_eq!(
        s.in_flight.len(),
        model_in_flight,
        "{}: in flight differs from the model at op {}",
        name,
        step
    );
    prop_assert!(s.cc.timeout() > Dur::ZERO, "{name}: zero timeout");
    prop_assert!(!s.cc.state_name().is_empty(), "{name}: empty state name");
    Ok(())
}

/// Options that switch a registered controller to another algorithm, driven as well (name, overrides).
const VARIANTS: &[(&str, &str)] = &[("ledbat", "plus_plus = true")];

fn drive(info: &ControllerInfo, ops: &[Op]) -> Result<(), TestCaseError> {
    drive_with(info, &toml::Table::new(), ops)
}

fn drive_with(
    info: &ControllerInfo,
    params: &toml::Table,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let cc =
        (info.build)(params).map_err(|e| TestCaseError::fail(format!("{}: {e}", info.name)))?;
    let mut s = Script::new(cc);
    let mut model_in_flight = 0usize;
    check(info, &s, 0, Time::ZERO, 0)?;
    for (i, op) in ops.iter().enumerate() {
        let prev_now = s.now;
        match *op {
            Op::Send(n) => {
                s.send(n);
                model_in_flight += n;
            }
            Op::Fill => {
                let n = (s.cc.cwnd() as usize)
                    .saturating_sub(s.in_flight.len())
                    .min(MAX_FILL);
                s.send(n);
                model_in_flight += n;
            }
            Op::Ack(rtt) => {
                let acked = s.ack_oldest(rtt);
                prop_assert_eq!(acked, model_in_flight > 0);
                model_in_flight = model_in_flight.saturating_sub(1);
            }
            Op::Lose(cause) => {
                let lost = s.lose_oldest(cause);
                prop_assert_eq!(lost, model_in_flight > 0);
                model_in_flight = model_in_flight.saturating_sub(1);
            }
            Op::Advance(d) => s.advance(d),
            Op::Timer => {
                if let Some(t) = s.cc.next_timer() {
                    if t > s.now && t - s.now <= Dur::from_ms(10_000) {
                        let d = t - s.now;
                        s.advance(d);
                    }
                }
            }
            Op::Timeout => {
                s.timeout();
                model_in_flight += 1;
            }
            Op::Congestion(cause) => {
                // One congestion event per episode (RFC 6582 §3.2); later losses in it are plain losses.
                let lost = if s.in_recovery {
                    s.lose_oldest(cause)
                } else {
                    s.congestion(cause)
                };
                prop_assert_eq!(lost, model_in_flight > 0);
                model_in_flight = model_in_flight.saturating_sub(1);
            }
            Op::RecoveryExit => {
                if s.in_recovery {
                    s.recovery_exit();
                }
            }
            Op::Rto => {
                s.rto();
                model_in_flight = 0;
            }
            Op::RtoRepeated => {
                s.rto_repeated();
                model_in_flight = 0;
            }
            Op::Undo => s.cc.on_undo(s.now),
        }
        check(info, &s, model_in_flight, prev_now, i + 1)?;
    }
    Ok(())
}

proptest! {
    #[test]
    fn every_controller_keeps_its_invariants_under_random_operations(ops in proptest::collection::vec(op(), 0..400)) {
        for info in CONTROLLERS {
            match catch_unwind(AssertUnwindSafe(|| drive(info, &ops))) {
                Ok(result) => result?,
                Err(_) => return Err(TestCaseError::fail(format!("{} panicked", info.name))),
            }
        }
        for (name, overrides) in VARIANTS {
            let info = CONTROLLERS.iter().find(|c| c.name == *name).expect("variant of a registered controller");
            let params: toml::Table = overrides.parse().expect("variant TOML parses");
            match catch_unwind(AssertUnwindSafe(|| drive_with(info, &params, &ops))) {
                Ok(result) => result?,
                Err(_) => return Err(TestCaseError::fail(format!("{name} ({overrides}) panicked"))),
            }
        }
    }
}
