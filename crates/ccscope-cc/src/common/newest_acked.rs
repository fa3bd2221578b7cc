//! The RTT sample Linux hands its congestion control: that of the newest packet an ACK newly
//! (S)ACKs (tcp_input.c `tcp_clean_rtx_queue`: `ca_rtt_us` from `last_ackt`/`last_sackt`;
//! `tcp_ack_update_rtt`: "RTT of last (S)ACKed packet"), which the BBR drafts call `rs.rtt`. A delayed
//! ACK echoes the oldest packet it covers (RFC 7323 §4.3), so `AckEvent::rtt` is one packet gap longer.
//! Fed by `Controller::on_packet_acked`, read once per ACK. A packet ever retransmitted gives no sample;
//! one among the cumulatively ACKed packets voids all of theirs (`FLAG_RETRANS_DATA_ACKED`), while a
//! newly SACKed packet's sample stands (`last_sackt`). An ACK with none keeps its own sample: Linux
//! falls back to the timestamp echo on an ACK that advances SND.UNA, and has none on any other.

use ccscope_core::{Dur, Time};

use crate::PacketAcked;

#[derive(Clone, Copy, Debug, Default)]
pub struct NewestAcked {
    /// (seq, send time) of the highest packet never retransmitted that the cumulative part of the ACK
    /// being processed has acknowledged so far (tcp_clean_rtx_queue `last_ackt`).
    cum: Option<(u64, Time)>,
    /// The cumulative part also covered a packet sent more than once (`FLAG_RETRANS_DATA_ACKED`).
    cum_retransmitted: bool,
    /// The same for the packets it newly SACKed (tcp_sacktag_one `last_sackt`).
    sack: Option<(u64, Time)>,
}

fn newer(slot: &mut Option<(u64, Time)>, ev: &PacketAcked) {
    if slot.is_none_or(|(seq, _)| ev.seq > seq) {
        *slot = Some((ev.seq, ev.send_time));
    }
}

impl NewestAcked {
    pub fn on_packet_acked(&mut self, ev: &PacketAcked) {
        // tcp_clean_rtx_queue and tcp_sacktag_one take no time from a packet ever retransmitted.
        match (ev.sacked, ev.retransmitted) {
            (true, true) => {}
            (true, false) => newer(&mut self.sack, ev),
            (false, true) => self.cum_retransmitted = true,
            (false, false) => newer(&mut self.cum, ev),
        }
    }

    /// The newest packet's RTT at `now`, or `echo` (the ACK's own sample) when the ACK handed none;
    /// the next ACK starts afresh.
    pub fn take_rtt(&mut self, now: Time, echo: Dur) -> Dur {
        // tcp_clean_rtx_queue: ca_rtt_us from last_ackt unless FLAG_RETRANS_DATA_ACKED, then from
        // last_sackt if this ACK SACKed any.
        let cum = self.cum.take().filter(|_| !self.cum_retransmitted);
        self.cum_retransmitted = false;
        self.sack
            .take()
            .or(cum)
            .map_or(echo, |(_, sent)| now.since(sent))
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
            sacked: false,
        }
    }

    fn sacked(seq: u64, sent_ms: u64, retransmitted: bool) -> PacketAcked {
        PacketAcked {
            sacked: true,
            ..acked(seq, sent_ms, retransmitted)
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
        // The original of packet 9 arrived after its resend at 50 ms: 0.5 ms is no RTT (Karn), and
        // packet 8, cumulatively ACKed with it, gives none either (FLAG_RETRANS_DATA_ACKED): the echo.
        let mut n = NewestAcked::default();
        n.on_packet_acked(&acked(8, 11, false));
        n.on_packet_acked(&acked(9, 50, true));
        assert_eq!(
            n.take_rtt(Time::from_ms(50) + Dur::from_us(500), Dur::from_ms(41)),
            Dur::from_ms(41)
        );
        // SACKed, packet 8 would have given its own (tcp_sacktag_one skips only the resent one).
        n.on_packet_acked(&sacked(8, 11, false));
        n.on_packet_acked(&sacked(9, 50, true));
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

    #[test]
    fn a_resent_packet_among_the_cumulatively_acked_ones_voids_their_samples_but_not_a_sacks() {
        // Packet 5 resent at 50 ms, 6 sent once at 12 ms and never SACKed: one ACK at 60 ms covers
        // both. tcp_clean_rtx_queue sets FLAG_RETRANS_DATA_ACKED and takes no time from 6 (48 ms
        // would include the whole recovery); tcp_ack_update_rtt falls back to the echo.
        let mut n = NewestAcked::default();
        n.on_packet_acked(&acked(5, 50, true));
        n.on_packet_acked(&acked(6, 12, false));
        assert_eq!(
            n.take_rtt(Time::from_ms(60), Dur::from_ms(10)),
            Dur::from_ms(10)
        );
        // The same order reversed (the original of 5 arrived, 6 was resent) voids 5's as well.
        n.on_packet_acked(&acked(5, 12, false));
        n.on_packet_acked(&acked(6, 50, true));
        assert_eq!(
            n.take_rtt(Time::from_ms(60), Dur::from_ms(10)),
            Dur::from_ms(10)
        );
        // A packet the same ACK newly SACKs still gives `last_sackt`'s sample.
        n.on_packet_acked(&acked(5, 50, true));
        n.on_packet_acked(&sacked(8, 20, false));
        assert_eq!(
            n.take_rtt(Time::from_ms(60), Dur::from_ms(10)),
            Dur::from_ms(40)
        );
    }
}
