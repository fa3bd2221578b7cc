//! RTT estimation: latest, minimum and smoothed RTT with variance (RFC 6298 §2: alpha 1/8, beta 1/4).

use ccscope_core::Dur;

#[derive(Clone, Copy, Debug, Default)]
pub struct RttEstimator {
    latest: Option<Dur>,
    min: Option<Dur>,
    srtt_ns: f64,
    rttvar_ns: f64,
}

impl RttEstimator {
    pub fn on_sample(&mut self, rtt: Dur) {
        let r = rtt.as_ns() as f64;
        if self.latest.is_none() {
            // RFC 6298 §2.2: first sample.
            self.srtt_ns = r;
            self.rttvar_ns = r / 2.0;
        } else {
            // RFC 6298 §2.3.
            self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (self.srtt_ns - r).abs();
            self.srtt_ns = 0.875 * self.srtt_ns + 0.125 * r;
        }
        self.latest = Some(rtt);
        self.min = Some(self.min.map_or(rtt, |m| m.min(rtt)));
    }

    pub fn latest(&self) -> Option<Dur> {
        self.latest
    }
    pub fn min(&self) -> Option<Dur> {
        self.min
    }
    pub fn srtt(&self) -> Option<Dur> {
        self.latest.map(|_| Dur(self.srtt_ns as u64))
    }
    pub fn rttvar(&self) -> Option<Dur> {
        self.latest.map(|_| Dur(self.rttvar_ns as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoothing_follows_rfc6298_weights() {
        let mut e = RttEstimator::default();
        e.on_sample(Dur::from_ms(100));
        assert_eq!(e.srtt(), Some(Dur::from_ms(100)));
        assert_eq!(e.rttvar(), Some(Dur::from_ms(50)));
        e.on_sample(Dur::from_ms(200));
        assert_eq!(e.srtt(), Some(Dur::from_ms_f64(112.5)));
        assert_eq!(e.rttvar(), Some(Dur::from_ms_f64(62.5)));
        assert_eq!(e.min(), Some(Dur::from_ms(100)));
    }
}
