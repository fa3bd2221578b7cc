//! The RTT sample Linux hands its congestion control: that of the newest packet an ACK newly
//! (S)ACKs (tcp_input.c `tcp_clean_rtx_queue`: `ca_rtt_us` from `last_ackt`/`last_sackt`;
//! `tcp_ack_update_rtt`: "RTT of last (S)ACKed packet"), which the BBR drafts call `rs.rtt`. A delayed
//! ACK echoes the oldest packet it covers (RFC 7323 §4.3), so `AckEvent::rtt` is one packet gap longer.
//! Fed by `Controller::on_packet_acked`, read once per ACK; a packet ever retransmitted gives no sample,
//! and an ACK with none keeps its own (Linux falls back to the timestamp echo).

use ccscope_core::{Dur, Time};

use crate::PacketAcked;

#[derive(Clone, Copy, Debug, Default)]
pub struct NewestAcked {
    /// (seq, send time) of the highest packet never retransmitted that the ACK being processed has
    /// newly acknowledged so far.
    newest: Option<(u64, Time)>,
}

impl NewestAcked {
    pub fn on_packet_acked(&mut self, ev: &PacketAcked) {
        // tcp_clean_rtx_queue and tcp_sacktag_one take no time from a packet ever retransmitted.
        if ev.retransmitted {
            return;
        }
        if self.newest.is_none_or(|(seq, _)| ev.seq > seq) {
            self.newest = Some((ev.seq, ev.send_time));
        }
    }

    /// The newest packet's RTT at `now`, or `echo` (the ACK's own sample) when the ACK handed none;
    /// the next ACK starts afresh.
    pub fn take_rtt(&mut self, now: Time, echo: Dur) -> Dur {
        self.newest.take().map_or(echo, |(_, sent)| now.since(sent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acked(seq: u64, sent_ms: u64, retransmitted: bool) -> PacketAcked {
        PacketAcked {
            seq,
            bytes: 1500,
            send_time: Time::from_ms(sent_ms),
            tag: 0,
            recv_time: None,
            host_bytes: None,
            retransmitted,
        }
    }

    #[test]
    fn the_highest_packet_of_an_ack_gives_the_sample_and_the_next_ack_starts_afresh() {
        let mut n = NewestAcked::default();
        n.on_packet_acked(&acked(7, 11, false));
        n.on_packet_acked(&acked(5, 10, false));
        assert_eq!(
            n.take_rtt(Time::from_ms(51), Dur::from_ms(41)),
            Dur::from_ms(40)
        );
        // An ACK that acknowledged nothing new keeps its own sample.
        assert_eq!(
            n.take_rtt(Time::from_ms(60), Dur::from_ms(45)),
            Dur::from_ms(45)
        );
    }

    #[test]
    fn a_packet_sent_twice_gives_no_sample() {
        // The original of packet 9 arrived after its resend at 50 ms: 0.5 ms is no RTT (Karn).
        let mut n = NewestAcked::default();
        n.on_packet_acked(&acked(8, 11, false));
        n.on_packet_acked(&acked(9, 50, true));
        assert_eq!(
            n.take_rtt(Time::from_ms(50) + Dur::from_us(500), Dur::from_ms(41)),
            Dur::from_us(39_500)
        );
        n.on_packet_acked(&acked(9, 50, true));
        assert_eq!(
            n.take_rtt(Time::from_ms(51), Dur::from_ms(41)),
            Dur::from_ms(41)
        );
    }
}
