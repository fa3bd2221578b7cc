//! One property harness for every registered controller (STYLE.md §14): random operation sequences
//! through a controller built with its default parameters, checking invariants after each step; and the
//! same sequences through the controller called directly, through its `AnyController` arm and through
//! `AnyController::Boxed`, which must give the same answer to every query of the trait after each step.
//! Invariants: no panic, cwnd within [floor, `MAX_CWND`], a positive timeout, a state name, and a timer
//! that moves on once fired (one that keeps asking for the instant it fired at would hang a run).
//! Controllers keep no in-flight count of their own, so STYLE.md §14's "model in-flight = controller
//! in-flight" has nothing on the controller's side to compare with and is not checked.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ccscope_core::{Bandwidth, Dur, Time};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::registry::{ConcreteVisitor, ControllerInfo, CONTROLLERS};
use crate::testing::Script;
use crate::{AnyController, Controller, LossCause, MAX_CWND};

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
    prop_assert!(s.cc.timeout() > Dur::ZERO, "{name}: zero timeout");
    prop_assert!(!s.cc.state_name().is_empty(), "{name}: empty state name");
    Ok(())
}

/// Options that switch a registered controller to another algorithm, driven as well (name, overrides).
const VARIANTS: &[(&str, &str)] = &[
    ("ledbat", "plus_plus = true"),
    ("cubic", "hystart = \"linux\""),
    ("cubic", "hystart = \"ns3\""),
];

/// `info`'s controller with `params`; a refused build fails the case, naming the controller.
fn build(info: &ControllerInfo, params: &toml::Table) -> Result<AnyController, TestCaseError> {
    (info.build)(params).map_err(|e| TestCaseError::fail(format!("{}: {e}", info.name)))
}

fn drive(info: &ControllerInfo, ops: &[Op]) -> Result<(), TestCaseError> {
    drive_with(info, &toml::Table::new(), ops)
}

fn drive_with(
    info: &ControllerInfo,
    params: &toml::Table,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let mut s = script(build(info, params)?);
    check(info, &s, 0)?;
    for (i, op) in ops.iter().enumerate() {
        apply(&mut s, op);
        check(info, &s, i + 1)?;
    }
    Ok(())
}

/// A scripted sender for `cc`; its ACKs carry the host's arrivals when the controller reads them.
fn script<C: Controller>(cc: C) -> Script<C> {
    let mut s = Script::new(cc);
    if s.cc.wants_host_feedback() {
        s.host_bytes = Some(0);
    }
    s
}

/// Performs `op` on `s` as a transport would. A timer that fires keeps asking for the same instant
/// makes `Script::advance` panic, which fails the case naming the controller.
fn apply<C: Controller>(s: &mut Script<C>, op: &Op) {
    match *op {
        Op::Send(n) => s.send(n),
        Op::Fill => {
            let n = (s.cc.cwnd() as usize)
                .saturating_sub(s.in_flight.len())
                .min(MAX_FILL);
            s.send(n);
        }
        Op::Ack(rtt) => {
            // The receiving host's arrivals include the packet this ACK is for (one flow per host).
            if let (Some(h), false) = (s.host_bytes.as_mut(), s.in_flight.is_empty()) {
                *h += u64::from(s.bytes);
            }
            s.ack_oldest(rtt);
        }
        Op::Lose(cause) => {
            s.lose_oldest(cause);
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
        Op::Timeout => s.timeout(),
        Op::Congestion(cause) => {
            // One congestion event per episode (RFC 6582 §3.2); later losses in it are plain losses.
            if s.in_recovery {
                s.lose_oldest(cause);
            } else {
                s.congestion(cause);
            }
        }
        Op::RecoveryExit => {
            if s.in_recovery {
                s.recovery_exit();
            }
        }
        Op::Rto => s.rto(),
        Op::RtoRepeated => s.rto_repeated(),
        Op::Undo => s.cc.on_undo(s.now),
    }
}

/// Options that make a controller answer a query with something other than the trait's default
/// (training samples, host feedback), so a forwarding arm that returns the default is seen.
const DISPATCH_VARIANTS: &[(&str, &str)] = &[
    ("verus", "record = \"packet\""),
    ("sac", "signal = \"receiver_aggregate\""),
];

/// Every answer the `Controller` trait gives a caller, read after a step (`take_samples` only at the end,
/// as the simulator reads it).
#[derive(Debug, PartialEq)]
struct Answers {
    now: Time,
    cwnd: u32,
    pacing_rate: Option<Bandwidth>,
    next_timer: Option<Time>,
    timeout: Dur,
    state_name: &'static str,
    sets_window_in_recovery: bool,
    wants_host_feedback: bool,
    wants_rate_sample: bool,
    counters: Vec<(&'static str, u64)>,
    /// (seq, send time, tag `on_send` returned) of each packet in flight.
    in_flight: Vec<(u64, Time, u64)>,
    in_recovery: bool,
}

fn answers<C: Controller>(s: &Script<C>) -> Answers {
    Answers {
        now: s.now,
        cwnd: s.cc.cwnd(),
        pacing_rate: s.cc.pacing_rate(),
        next_timer: s.cc.next_timer(),
        timeout: s.cc.timeout(),
        state_name: s.cc.state_name(),
        sets_window_in_recovery: s.cc.sets_window_in_recovery(),
        wants_host_feedback: s.cc.wants_host_feedback(),
        wants_rate_sample: s.cc.wants_rate_sample(),
        counters: s.cc.counters(),
        in_flight: s.in_flight.iter().copied().collect(),
        in_recovery: s.in_recovery,
    }
}

/// Drives one controller three ways with the same operations: called directly as its own type,
/// through its `AnyController` variant, and through `AnyController::Boxed` (the `Box<dyn Controller>` impl).
struct SameAnswers<'a> {
    info: &'static ControllerInfo,
    params: &'a toml::Table,
    ops: &'a [Op],
}

impl ConcreteVisitor for SameAnswers<'_> {
    type Output = Result<(), TestCaseError>;

    fn visit<C: Controller + 'static>(self, direct: C) -> Self::Output {
        let name = self.info.name;
        let ty = std::any::type_name::<C>();
        prop_assert!(
            ty.contains(&format!("::{name}::")) && !ty.contains("Box<"),
            "{name}: the direct lane holds {ty}, not the controller's own type"
        );
        let by_enum = build(self.info, self.params)?;
        prop_assert!(
            !matches!(by_enum, AnyController::Boxed(_)),
            "{name}: built as Boxed"
        );
        let by_box = build(self.info, self.params)?.into_dyn();
        prop_assert!(
            matches!(by_box, AnyController::Boxed(_)),
            "{name}: into_dyn kept the enum variant"
        );
        let (mut d, mut e, mut b) = (script(direct), script(by_enum), script(by_box));
        for step in 0..=self.ops.len() {
            if step > 0 {
                let op = &self.ops[step - 1];
                apply(&mut d, op);
                apply(&mut e, op);
                apply(&mut b, op);
            }
            let want = answers(&d);
            prop_assert_eq!(
                &answers(&e),
                &want,
                "{}: enum differs from direct after op {}",
                name,
                step
            );
            prop_assert_eq!(
                &answers(&b),
                &want,
                "{}: Boxed differs from direct after op {}",
                name,
                step
            );
        }
        let want = d.cc.take_samples();
        prop_assert_eq!(
            &e.cc.take_samples(),
            &want,
            "{}: enum take_samples differs",
            name
        );
        prop_assert_eq!(
            &b.cc.take_samples(),
            &want,
            "{}: Boxed take_samples differs",
            name
        );
        Ok(())
    }
}

fn same_answers(
    info: &'static ControllerInfo,
    params: &toml::Table,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    build(info, params)?.visit_concrete(SameAnswers { info, params, ops })
}

/// A controller that declines rate samples (`wants_rate_sample` false) decides the same whether its ACKs
/// carry them or not: the transports may skip computing them.
fn same_without_rate_samples(
    info: &ControllerInfo,
    params: &toml::Table,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let (mut with, mut without) = (script(build(info, params)?), script(build(info, params)?));
    if without.cc.wants_rate_sample() {
        return Ok(());
    }
    with.rate_samples = true;
    for (step, op) in ops.iter().enumerate() {
        apply(&mut with, op);
        apply(&mut without, op);
        prop_assert_eq!(
            answers(&with),
            answers(&without),
            "{} decided differently with rate samples after step {} ({:?})",
            info.name,
            step + 1,
            op
        );
    }
    prop_assert_eq!(
        with.cc.take_samples(),
        without.cc.take_samples(),
        "{}: training samples",
        info.name
    );
    Ok(())
}

/// Runs `check` on every registered controller with its defaults and with each variant of `VARIANTS`
/// and `DISPATCH_VARIANTS`; a panic fails the case, naming the controller.
fn for_every_variant(
    ops: &[Op],
    check: impl Fn(&'static ControllerInfo, &toml::Table, &[Op]) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    let variants = VARIANTS
        .iter()
        .chain(DISPATCH_VARIANTS)
        .map(|&(n, o)| (n, o));
    let plain = CONTROLLERS.iter().map(|c| (c.name, ""));
    for (name, overrides) in plain.chain(variants) {
        let info = CONTROLLERS
            .iter()
            .find(|c| c.name == name)
            .expect("a registered controller");
        let params: toml::Table = overrides.parse().expect("variant TOML parses");
        match catch_unwind(AssertUnwindSafe(|| check(info, &params, ops))) {
            Ok(result) => result?,
            Err(_) => {
                return Err(TestCaseError::fail(format!(
                    "{name} ({overrides}) panicked"
                )))
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn every_controller_that_declines_rate_samples_decides_the_same_with_them(ops in proptest::collection::vec(op(), 0..400)) {
        for_every_variant(&ops, same_without_rate_samples)?;
    }

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

    #[test]
    fn every_controller_answers_the_same_called_directly_through_its_enum_arm_and_boxed(ops in proptest::collection::vec(op(), 0..400)) {
        for_every_variant(&ops, same_answers)?;
    }
}
