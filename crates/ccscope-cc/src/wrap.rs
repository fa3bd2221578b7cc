//! A controller wrapped to watch or alter what it sees (a trace, a recorded script, a perturbed pacing
//! rate): [`Wrapped`] forwards every [`Controller`] method to the inner controller through [`Hooks`],
//! whose defaults forward unchanged, so a wrapper writes only the hooks it changes and cannot drop one.

use ccscope_core::{Bandwidth, Dur, Time};

use crate::{
    AckEvent, CongestionEvent, Controller, DelayWindowSample, LossEvent, PacketAcked, SendEvent,
};

/// What a wrapper does around each call; every hook gets the inner controller and by default forwards.
pub trait Hooks<C: Controller>: Send {
    fn on_send(&mut self, inner: &mut C, now: Time, ev: &SendEvent) -> u64 {
        inner.on_send(now, ev)
    }
    fn on_ack(&mut self, inner: &mut C, now: Time, ev: &AckEvent) {
        inner.on_ack(now, ev)
    }
    fn on_packet_acked(&mut self, inner: &mut C, now: Time, ev: &PacketAcked) {
        inner.on_packet_acked(now, ev)
    }
    fn on_loss(&mut self, inner: &mut C, now: Time, ev: &LossEvent) {
        inner.on_loss(now, ev)
    }
    fn on_congestion_event(&mut self, inner: &mut C, now: Time, ev: &CongestionEvent) {
        inner.on_congestion_event(now, ev)
    }
    fn on_recovery_exit(&mut self, inner: &mut C, now: Time) {
        inner.on_recovery_exit(now)
    }
    fn on_rto(&mut self, inner: &mut C, now: Time) {
        inner.on_rto(now)
    }
    fn on_rto_repeated(&mut self, inner: &mut C, now: Time) {
        inner.on_rto_repeated(now)
    }
    fn on_undo(&mut self, inner: &mut C, now: Time) {
        inner.on_undo(now)
    }
    fn sets_window_in_recovery(&self, inner: &C) -> bool {
        inner.sets_window_in_recovery()
    }
    fn on_timeout(&mut self, inner: &mut C, now: Time) {
        inner.on_timeout(now)
    }
    fn on_timer(&mut self, inner: &mut C, now: Time) {
        inner.on_timer(now)
    }
    fn next_timer(&self, inner: &C) -> Option<Time> {
        inner.next_timer()
    }
    fn cwnd(&self, inner: &C) -> u32 {
        inner.cwnd()
    }
    fn pacing_rate(&self, inner: &C) -> Option<Bandwidth> {
        inner.pacing_rate()
    }
    fn timeout(&self, inner: &C) -> Dur {
        inner.timeout()
    }
    fn take_samples(&mut self, inner: &mut C) -> Vec<DelayWindowSample> {
        inner.take_samples()
    }
    fn state_name(&self, inner: &C) -> &'static str {
        inner.state_name()
    }
    fn wants_host_feedback(&self, inner: &C) -> bool {
        inner.wants_host_feedback()
    }
    fn wants_packet_acks(&self, inner: &C) -> bool {
        inner.wants_packet_acks()
    }
    fn wants_rate_sample(&self, inner: &C) -> bool {
        inner.wants_rate_sample()
    }
    fn counters(&self, inner: &C) -> Vec<(&'static str, u64)> {
        inner.counters()
    }
}

/// No hooks: the inner controller unchanged.
impl<C: Controller> Hooks<C> for () {}

/// `inner` driven through `hooks`.
pub struct Wrapped<C, H> {
    pub inner: C,
    pub hooks: H,
}

impl<C: Controller, H: Hooks<C>> Wrapped<C, H> {
    pub fn new(inner: C, hooks: H) -> Self {
        Wrapped { inner, hooks }
    }
}

impl<C: Controller, H: Hooks<C>> Controller for Wrapped<C, H> {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        self.hooks.on_send(&mut self.inner, now, ev)
    }
    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        self.hooks.on_ack(&mut self.inner, now, ev)
    }
    fn on_packet_acked(&mut self, now: Time, ev: &PacketAcked) {
        self.hooks.on_packet_acked(&mut self.inner, now, ev)
    }
    fn on_loss(&mut self, now: Time, ev: &LossEvent) {
        self.hooks.on_loss(&mut self.inner, now, ev)
    }
    fn on_congestion_event(&mut self, now: Time, ev: &CongestionEvent) {
        self.hooks.on_congestion_event(&mut self.inner, now, ev)
    }
    fn on_recovery_exit(&mut self, now: Time) {
        self.hooks.on_recovery_exit(&mut self.inner, now)
    }
    fn on_rto(&mut self, now: Time) {
        self.hooks.on_rto(&mut self.inner, now)
    }
    fn on_rto_repeated(&mut self, now: Time) {
        self.hooks.on_rto_repeated(&mut self.inner, now)
    }
    fn on_undo(&mut self, now: Time) {
        self.hooks.on_undo(&mut self.inner, now)
    }
    fn sets_window_in_recovery(&self) -> bool {
        self.hooks.sets_window_in_recovery(&self.inner)
    }
    fn on_timeout(&mut self, now: Time) {
        self.hooks.on_timeout(&mut self.inner, now)
    }
    fn on_timer(&mut self, now: Time) {
        self.hooks.on_timer(&mut self.inner, now)
    }
    fn next_timer(&self) -> Option<Time> {
        self.hooks.next_timer(&self.inner)
    }
    fn cwnd(&self) -> u32 {
        self.hooks.cwnd(&self.inner)
    }
    fn pacing_rate(&self) -> Option<Bandwidth> {
        self.hooks.pacing_rate(&self.inner)
    }
    fn timeout(&self) -> Dur {
        self.hooks.timeout(&self.inner)
    }
    fn take_samples(&mut self) -> Vec<DelayWindowSample> {
        self.hooks.take_samples(&mut self.inner)
    }
    fn state_name(&self) -> &'static str {
        self.hooks.state_name(&self.inner)
    }
    fn wants_host_feedback(&self) -> bool {
        self.hooks.wants_host_feedback(&self.inner)
    }
    fn wants_packet_acks(&self) -> bool {
        self.hooks.wants_packet_acks(&self.inner)
    }
    fn wants_rate_sample(&self) -> bool {
        self.hooks.wants_rate_sample(&self.inner)
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.hooks.counters(&self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LossCause;

    /// Answers every method with a value no default gives, and logs the calls it gets.
    #[derive(Default)]
    struct Loud {
        calls: Vec<&'static str>,
    }

    impl Controller for Loud {
        fn on_send(&mut self, _: Time, _: &SendEvent) -> u64 {
            self.calls.push("on_send");
            7
        }
        fn on_ack(&mut self, _: Time, _: &AckEvent) {
            self.calls.push("on_ack")
        }
        fn on_packet_acked(&mut self, _: Time, _: &PacketAcked) {
            self.calls.push("on_packet_acked")
        }
        fn on_loss(&mut self, _: Time, _: &LossEvent) {
            self.calls.push("on_loss")
        }
        fn on_congestion_event(&mut self, _: Time, _: &CongestionEvent) {
            self.calls.push("on_congestion_event")
        }
        fn on_recovery_exit(&mut self, _: Time) {
            self.calls.push("on_recovery_exit")
        }
        fn on_rto(&mut self, _: Time) {
            self.calls.push("on_rto")
        }
        fn on_rto_repeated(&mut self, _: Time) {
            self.calls.push("on_rto_repeated")
        }
        fn on_undo(&mut self, _: Time) {
            self.calls.push("on_undo")
        }
        fn sets_window_in_recovery(&self) -> bool {
            true
        }
        fn on_timeout(&mut self, _: Time) {
            self.calls.push("on_timeout")
        }
        fn on_timer(&mut self, _: Time) {
            self.calls.push("on_timer")
        }
        fn next_timer(&self) -> Option<Time> {
            Some(Time(9))
        }
        fn cwnd(&self) -> u32 {
            11
        }
        fn pacing_rate(&self) -> Option<Bandwidth> {
            Some(Bandwidth::from_bps(13))
        }
        fn timeout(&self) -> Dur {
            Dur(17)
        }
        fn take_samples(&mut self) -> Vec<DelayWindowSample> {
            vec![DelayWindowSample {
                t: Time(1),
                d_ms: 2,
                w: 3,
            }]
        }
        fn state_name(&self) -> &'static str {
            "loud"
        }
        fn wants_host_feedback(&self) -> bool {
            true
        }
        fn wants_packet_acks(&self) -> bool {
            true
        }
        fn wants_rate_sample(&self) -> bool {
            true
        }
        fn counters(&self) -> Vec<(&'static str, u64)> {
            vec![("loud", 19)]
        }
    }

    #[test]
    fn without_hooks_every_method_reaches_the_inner_controller() {
        let mut w = Wrapped::new(Loud::default(), ());
        let t = Time(5);
        let send = SendEvent {
            seq: 0,
            bytes: 1500,
            in_flight: 1,
            after_timeout: false,
            retransmission: false,
            app_limited: false,
        };
        let ack = AckEvent {
            seq: 0,
            bytes: 1500,
            send_time: Time::ZERO,
            recv_time: t,
            rtt: Dur(5),
            ca_rtt: Dur(5),
            in_flight: 0,
            last_sent_seq: 0,
            tag: 7,
            newly_acked: 1,
            snd_una_advanced: true,
            in_recovery: false,
            rate: None,
            host_bytes: None,
        };
        let loss = LossEvent {
            seq: 0,
            bytes: 1500,
            send_time: Time::ZERO,
            in_flight: 0,
            cause: LossCause::Timeout,
            tag: 7,
        };
        let congestion = CongestionEvent {
            in_flight: 1,
            send_time: Time::ZERO,
            cause: LossCause::Reordering,
        };
        let packet = PacketAcked {
            seq: 0,
            bytes: 1500,
            send_time: Time::ZERO,
            tag: 7,
            recv_time: Some(t),
            host_bytes: None,
        };
        assert_eq!(w.on_send(t, &send), 7);
        w.on_packet_acked(t, &packet);
        w.on_ack(t, &ack);
        w.on_loss(t, &loss);
        w.on_congestion_event(t, &congestion);
        w.on_recovery_exit(t);
        w.on_rto(t);
        w.on_rto_repeated(t);
        w.on_undo(t);
        w.on_timeout(t);
        w.on_timer(t);
        assert_eq!(
            w.inner.calls,
            [
                "on_send",
                "on_packet_acked",
                "on_ack",
                "on_loss",
                "on_congestion_event",
                "on_recovery_exit",
                "on_rto",
                "on_rto_repeated",
                "on_undo",
                "on_timeout",
                "on_timer"
            ]
        );
        assert!(w.sets_window_in_recovery());
        assert_eq!(w.next_timer(), Some(Time(9)));
        assert_eq!(w.cwnd(), 11);
        assert_eq!(w.pacing_rate(), Some(Bandwidth::from_bps(13)));
        assert_eq!(w.timeout(), Dur(17));
        assert_eq!(w.take_samples().len(), 1);
        assert_eq!(w.state_name(), "loud");
        assert!(w.wants_host_feedback());
        assert!(w.wants_packet_acks());
        assert!(w.wants_rate_sample());
        assert_eq!(w.counters(), [("loud", 19)]);
    }

    /// Counts ACKs and halves the pacing rate: the two hooks it writes; the rest forward.
    struct Halve {
        acks: u32,
    }

    impl Hooks<Loud> for Halve {
        fn on_ack(&mut self, inner: &mut Loud, now: Time, ev: &AckEvent) {
            self.acks += 1;
            inner.on_ack(now, ev)
        }
        fn pacing_rate(&self, inner: &Loud) -> Option<Bandwidth> {
            inner
                .pacing_rate()
                .map(|r| Bandwidth::from_bps(r.bps() / 2))
        }
    }

    #[test]
    fn a_hook_changes_only_its_own_method() {
        let mut w = Wrapped::new(Loud::default(), Halve { acks: 0 });
        w.on_timer(Time(1));
        assert_eq!(w.hooks.acks, 0);
        assert_eq!(w.pacing_rate(), Some(Bandwidth::from_bps(6)));
        assert_eq!((w.cwnd(), w.state_name()), (11, "loud"));
        assert_eq!(w.inner.calls, ["on_timer"]);
    }
}
