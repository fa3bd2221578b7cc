//! The explicit solver: Q as CSR built row by row from [`Chain::transitions`], its transpose for
//! Gauss-Seidel pulls, and the residual ||pi Q - pi||_1 from the rows.

use super::chain::Chain;
use super::{CmtMarkovError, Solver, Stationary};

/// Q in compressed sparse rows (row = source state).
pub struct Csr {
    pub row_ptr: Vec<usize>,
    pub col: Vec<u32>,
    pub val: Vec<f64>,
}

impl Csr {
    pub fn nonzeros(&self) -> usize {
        self.val.len()
    }

    pub fn n(&self) -> usize {
        self.row_ptr.len() - 1
    }

    /// y = pi Q.
    pub fn left_mul(&self, pi: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        for (i, &v) in pi.iter().enumerate() {
            if v == 0.0 {
                continue;
            }
            for e in self.row_ptr[i]..self.row_ptr[i + 1] {
                y[self.col[e] as usize] += v * self.val[e];
            }
        }
    }

    /// The transpose (row = target state), entries in ascending source order.
    pub fn transpose(&self) -> Csr {
        let n = self.n();
        let mut count = vec![0usize; n + 1];
        for &c in &self.col {
            count[c as usize + 1] += 1;
        }
        for j in 0..n {
            count[j + 1] += count[j];
        }
        let row_ptr = count.clone();
        let mut next = count;
        let mut col = vec![0u32; self.nonzeros()];
        let mut val = vec![0.0; self.nonzeros()];
        for i in 0..n {
            for e in self.row_ptr[i]..self.row_ptr[i + 1] {
                let j = self.col[e] as usize;
                col[next[j]] = i as u32;
                val[next[j]] = self.val[e];
                next[j] += 1;
            }
        }
        Csr { row_ptr, col, val }
    }
}

/// Build Q from the per-state rules.
pub fn build(ch: &Chain) -> Csr {
    let n = ch.n_states();
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut col = Vec::new();
    let mut val = Vec::new();
    row_ptr.push(0);
    for i in 0..n {
        for (t, prob, _) in ch.transitions(ch.state(i)) {
            col.push(ch.index(t) as u32);
            val.push(prob);
        }
        row_ptr.push(col.len());
    }
    Csr { row_ptr, col, val }
}

/// ||pi Q - pi||_1 with Q explicit.
pub fn residual(q: &Csr, pi: &[f64]) -> f64 {
    let mut y = vec![0.0; pi.len()];
    q.left_mul(pi, &mut y);
    y.iter().zip(pi).map(|(a, b)| (a - b).abs()).sum()
}

/// Gauss-Seidel on the explicit matrix, in [`Chain::sweep_order`].
pub fn solve(ch: &Chain, tol: f64, max_sweeps: u32) -> Result<Stationary, CmtMarkovError> {
    let q = build(ch);
    let qt = q.transpose();
    // 1 - Q(j, j) as the mass row j sends elsewhere: the subtraction is 0 once 1 - p rounds to 1.
    let leave: Vec<f64> = (0..ch.n_states())
        .map(|j| {
            (q.row_ptr[j]..q.row_ptr[j + 1])
                .filter(|&e| q.col[e] as usize != j)
                .map(|e| q.val[e])
                .sum()
        })
        .collect();
    let order = ch.sweep_order();
    let mut pi = ch.initial();
    let mut last = f64::INFINITY;
    for sweep in 1..=max_sweeps {
        for &j in &order {
            let mut inflow = 0.0;
            for e in qt.row_ptr[j]..qt.row_ptr[j + 1] {
                let i = qt.col[e] as usize;
                if i != j {
                    inflow += pi[i] * qt.val[e];
                }
            }
            pi[j] = inflow / leave[j];
        }
        let total: f64 = pi.iter().sum();
        pi.iter_mut().for_each(|v| *v /= total);
        last = residual(&q, &pi);
        if last <= tol {
            return Ok(Stationary {
                pi,
                iterations: sweep,
                residual: last,
            });
        }
    }
    Err(CmtMarkovError::NotConverged {
        solver: Solver::Explicit,
        sweeps: max_sweeps,
        residual: last,
        target: tol,
    })
}
