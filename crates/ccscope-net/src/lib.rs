//! ccscope-net: the network between endpoints.
//!
//! A link is a queue in front of a serializer (a constant rate or Mahimahi delivery opportunities);
//! propagation delay is a separate FIFO delay line. Random loss sits in front of the queue.

pub mod link;
pub mod loss;
pub mod packet;
pub mod pipe;
pub mod queue;
pub mod trace;

pub use link::{Arrival, Link, Service};
pub use loss::{LossConfig, LossModel};
pub use packet::{Ack, AckInfo, AckPool, Packet, PacketKind};
pub use pipe::Pipe;
pub use queue::{AnyQueue, QueueConfig};
pub use trace::{Trace, TraceError, MAHIMAHI_MTU};
