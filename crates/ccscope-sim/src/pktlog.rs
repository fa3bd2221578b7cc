//! Per-packet log of the data link, kept in columns, writable in Mahimahi's log grammar.
//!
//! Grammar (Mahimahi `link_queue.cc`): a `# base timestamp: 0` header, then one event per line in
//! milliseconds: `t # bytes` a delivery opportunity, `t + bytes` an arrival, `t - bytes delay` a
//! departure with its queueing delay. ccscope adds `t d bytes` for a drop, which Mahimahi's graph
//! scripts do not know: `write_mahimahi` leaves drops out unless asked.

use std::io::{self, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogEvent {
    Opportunity = 0,
    Arrival = 1,
    Departure = 2,
    Drop = 3,
}

/// Columns: time (ns), event, flow (-1 for opportunities), seq, bytes, queueing delay (ms).
#[derive(Clone, Debug, Default)]
pub struct PacketLog {
    pub time_ns: Vec<u64>,
    pub event: Vec<u8>,
    pub flow: Vec<i32>,
    pub seq: Vec<u64>,
    pub bytes: Vec<u32>,
    pub delay_ms: Vec<u64>,
}

impl PacketLog {
    pub fn push(
        &mut self,
        t_ns: u64,
        ev: LogEvent,
        flow: i32,
        seq: u64,
        bytes: u32,
        delay_ms: u64,
    ) {
        self.time_ns.push(t_ns);
        self.event.push(ev as u8);
        self.flow.push(flow);
        self.seq.push(seq);
        self.bytes.push(bytes);
        self.delay_ms.push(delay_ms);
    }

    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    pub fn write_mahimahi<W: Write>(&self, w: &mut W, with_drops: bool) -> io::Result<()> {
        writeln!(
            w,
            "# mahimahi-compatible link log written by ccscope (times in ms)"
        )?;
        writeln!(w, "# init timestamp: 0")?;
        writeln!(w, "# base timestamp: 0")?;
        for i in 0..self.len() {
            let t = self.time_ns[i] / 1_000_000;
            match self.event[i] {
                0 => writeln!(w, "{t} # {}", self.bytes[i])?,
                1 => writeln!(w, "{t} + {}", self.bytes[i])?,
                2 => writeln!(w, "{t} - {} {}", self.bytes[i], self.delay_ms[i])?,
                _ if with_drops => writeln!(w, "{t} d {}", self.bytes[i])?,
                _ => {}
            }
        }
        Ok(())
    }
}
