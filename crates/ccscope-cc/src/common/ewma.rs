//! Exponentially weighted moving average: x <- (1 - w) x + w sample.

#[derive(Clone, Copy, Debug)]
pub struct Ewma {
    weight: f64,
    value: Option<f64>,
}

impl Ewma {
    pub fn new(weight: f64) -> Self {
        Ewma {
            weight,
            value: None,
        }
    }

    /// Start from `v` instead of the first sample.
    pub fn with_initial(weight: f64, v: f64) -> Self {
        Ewma {
            weight,
            value: Some(v),
        }
    }

    pub fn update(&mut self, sample: f64) -> f64 {
        let v = match self.value {
            None => sample,
            Some(v) => (1.0 - self.weight) * v + self.weight * sample,
        };
        self.value = Some(v);
        v
    }

    pub fn get(&self) -> Option<f64> {
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_seeds_then_weights_apply() {
        let mut e = Ewma::new(0.25);
        assert_eq!(e.update(8.0), 8.0);
        assert_eq!(e.update(0.0), 6.0);
        let mut z = Ewma::with_initial(0.5, 0.0);
        assert_eq!(z.update(4.0), 2.0);
    }
}
