//! Tests of the CMT Markov chain (paper 002 §4.3).

use super::chain::{self, count_nonzeros, Chain, State};
use super::explicit;
use super::*;

/// b = 1.2 Mbit/s of 1500 B packets is 100 packets/s: with d = 40 ms, b d = 4 packets (eq. 8).
fn small_path(p: f64, loss: LossModel, w: u64) -> Params {
    Params {
        p,
        b_mbps: 1.2,
        d_ms: 40.0,
        loss,
        window_packets: Some(w),
        ..Params::default()
    }
}

fn both() -> [LossModel; 2] {
    [LossModel::Correlated, LossModel::Independent]
}

#[track_caller]
fn assert_close(actual: f64, expected: f64, tol: f64) {
    assert!(
        (actual - expected).abs() <= tol * expected.abs().max(1.0),
        "got {actual}, expected {expected}"
    );
}

#[test]
fn every_row_of_q_sums_to_one_for_both_loss_models() {
    for loss in both() {
        for p in [1e-4, 1e-2, 0.3, 0.9] {
            for w in [2, 3, 4, 5, 6, 8, 9, 17, 40, 85] {
                let params = Params {
                    p,
                    loss,
                    window_packets: Some(w),
                    ..Params::default()
                };
                let ch = Chain::new(&params, w as usize, true);
                let q = explicit::build(&ch);
                for i in 0..q.n() {
                    let row = &q.val[q.row_ptr[i]..q.row_ptr[i + 1]];
                    assert!(
                        row.iter().all(|&v| v >= 0.0),
                        "{loss:?} p={p} W={w} row {:?}",
                        ch.state(i)
                    );
                    let s: f64 = row.iter().sum();
                    assert!(
                        (s - 1.0).abs() < 1e-12,
                        "{loss:?} p={p} W={w} row {:?} sums to {s}",
                        ch.state(i)
                    );
                }
            }
        }
    }
}

#[test]
fn counted_nonzeros_equal_the_built_matrix_and_every_state_has_one_index() {
    for w in [2usize, 3, 4, 7, 16, 33, 85] {
        let params = Params {
            window_packets: Some(w as u64),
            ..Params::default()
        };
        let ch = Chain::new(&params, w, true);
        assert_eq!(
            explicit::build(&ch).nonzeros() as u64,
            count_nonzeros(w, &params),
            "W={w}"
        );
        for i in 0..ch.n_states() {
            assert_eq!(ch.index(ch.state(i)), i, "W={w} state {:?}", ch.state(i));
        }
        // Eq. 12: W (W + 1) / 2 - 1 CA states; eq. 16: |T| = floor(log2(W/2)) + 1.
        assert_eq!(ch.n_ca, w * (w + 1) / 2 - 1);
        assert_eq!(ch.taus.len(), (w / 2).ilog2() as usize + 1);
    }
}

#[test]
fn a_fast_retransmit_row_matches_hand_worked_probabilities() {
    // CA (6, 5, 1): x = 5 >= 4, floor(6/2) = 3. g = 0 -> (3, 3), g = 1 -> (3, 2); g = 2 leaves
    // x - g = 3 < 4 SACKs: timeout into (1, 1, 2^floor(log2 3)) = tau 2 (eq. 14, A2, A6).
    let p = 0.1;
    let cases = [
        // eq. 7: q^5, p q^4; eq. 6: q^5, 5 p q^4.
        (LossModel::Correlated, 0.9f64.powi(5), 0.1 * 0.9f64.powi(4)),
        (
            LossModel::Independent,
            0.9f64.powi(5),
            5.0 * 0.1 * 0.9f64.powi(4),
        ),
    ];
    for (loss, p0, p1) in cases {
        let params = small_path(p, loss, 8);
        let ch = Chain::new(&params, 8, true);
        let t = ch.transitions(State::Ca { w: 6, x: 5 });
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].0, State::Ca { w: 3, x: 3 });
        assert_close(t[0].1, p0, 1e-14);
        assert_eq!(t[1].0, State::Ca { w: 3, x: 2 });
        assert_close(t[1].1, p1, 1e-14);
        assert_eq!(t[2].0, State::Eb { k: 1, tau: 2 });
        assert_close(t[2].1, 1.0 - p0 - p1, 1e-14);
        // Eq. 8: b d = 4 < 6, so RTT = w / b = 0.06 s; the timeout takes one RTO = 3 RTT (eq. 10).
        assert_close(t[0].2, 0.06, 1e-14);
        assert_close(t[2].2, 0.18, 1e-14);
    }
}

#[test]
fn slow_start_and_backoff_rows_follow_section_4_3_2_and_4_3_3() {
    let params = small_path(0.1, LossModel::Correlated, 16);
    let ch = Chain::new(&params, 16, true);
    assert_eq!(ch.taus, vec![1, 2, 4, 8]);
    // SS (2, 2, 8): no loss doubles to (4, 4, 8) since 8 > 4; one loss -> CA (2*2 - 1, 2*(2 - 1)) = (3, 2).
    let t = ch.transitions(State::Ss { w: 2, tau: 8 });
    assert_eq!(
        (t[0].0, t[1].0, t[2].0),
        (
            State::Ss { w: 4, tau: 8 },
            State::Ca { w: 3, x: 2 },
            State::Eb { k: 1, tau: 1 }
        )
    );
    // SS (4, 4, 8): 8 > 8 fails, so CA (8, 8, 1).
    assert_eq!(
        ch.transitions(State::Ss { w: 4, tau: 8 })[0].0,
        State::Ca { w: 8, x: 8 }
    );
    // Backoff entry (1, 1, 8): success -> SS (2, 2, 8) (A5); failure -> the second timeout, tau 1,
    // after 2 RTO with RTO = 3 (d + 1/b) = 0.15 s (A8).
    let t = ch.transitions(State::Eb { k: 1, tau: 8 });
    assert_eq!(
        (t[0].0, t[1].0),
        (State::Ss { w: 2, tau: 8 }, State::Eb { k: 2, tau: 1 })
    );
    assert_close(t[1].2, 0.3, 1e-14);
    // Eq. 18: M = floor(log2(60 / 0.15)) = 8; the last backoff state loops every RTO_max.
    assert_eq!(ch.m, 8);
    let t = ch.transitions(State::Eb { k: 8, tau: 1 });
    assert_eq!(
        (t[0].0, t[1].0),
        (State::Ca { w: 2, x: 2 }, State::Eb { k: 8, tau: 1 })
    );
    assert_close(t[1].2, 38.4, 1e-12); // 2^8 x 0.15 s = 38.4 s < 60 s
                                       // A full round lost from CA (5, 5) times out into tau = 2^floor(log2 2.5) = 2 (A2).
    assert_eq!(
        ch.transitions(State::Ca { w: 5, x: 5 }).last().unwrap().0,
        State::Eb { k: 1, tau: 2 }
    );
    // A1: no loss at the cap stays at (W, W).
    assert_eq!(
        ch.transitions(State::Ca { w: 16, x: 16 })[0].0,
        State::Ca { w: 16, x: 16 }
    );
}

#[test]
fn the_two_window_chain_matches_its_hand_solved_stationary_distribution() {
    // W = 2, eq. 7, p = 0.1, b = 100 pkt/s, d = 40 ms, RTO_max = 0.5 s: RTO = 0.15 s, M = max(1,
    // floor(log2(0.5 / 0.15))) = 1. States a = (2, 2, 1), c = (2, 1, 1), e = (1, 1, 1):
    // a -> a q^2 (capped growth), a -> c p q, a -> e p; c -> e 1 (x < 4); e -> a q, e -> e p.
    // Balance: pi_e = pi_a (1 - q^2) / q, pi_c = p q pi_a.
    let (p, q) = (0.1f64, 0.9f64);
    let params = Params {
        rto_max_s: 0.5,
        ..small_path(p, LossModel::Correlated, 2)
    };
    let (sol, st) = solve_full(&params, Solver::Explicit).unwrap();
    let pa = 1.0 / (1.0 + p * q + (1.0 - q * q) / q);
    let (pc, pe) = (p * q * pa, pa * (1.0 - q * q) / q);
    assert_eq!(st.pi.len(), 3);
    for (got, want) in st.pi.iter().zip([pc, pa, pe]) {
        assert_close(*got, want, 1e-12);
    }
    // Eq. 20: E[x] = 2 pi_a + pi_c + pi_e. Eq. 21 (A3): E[g | 2] = p + (1 - q^2), E[g | 1] = p.
    let ex = 2.0 * pa + pc + pe;
    let eg = pa * (p + 1.0 - q * q) + pc * p + pe * p;
    // Eq. 22 (A4): b d = 4 >= 2 so RTT = 0.05 s; a times out with probability p (3 RTT);
    // c always times out; e waits one RTT on success, 2 RTO = 0.3 s on failure.
    let ed = pa * 0.05 * (1.0 + 2.0 * p) + pc * 0.15 + pe * (q * 0.05 + p * 0.3);
    assert_close(sol.mean_sent, ex, 1e-12);
    assert_close(sol.mean_lost, eg, 1e-12);
    assert_close(sol.mean_duration_s, ed, 1e-12);
    assert_close(sol.throughput_pps, (ex - eg) / ed, 1e-12);
    assert_close(
        sol.throughput_mbps,
        (ex - eg) / ed * 1500.0 * 8.0 / 1e6,
        1e-12,
    );
}

#[test]
fn loss_event_rates_of_the_two_window_chain_match_the_hand_solution() {
    // The chain of the test above: a times out with probability p (g = w = 2), c always (x = 1 < 4,
    // §4.3.1), e fails with probability p (another timeout); no state can fast-retransmit.
    let (p, q) = (0.1f64, 0.9f64);
    let params = Params {
        rto_max_s: 0.5,
        ..small_path(p, LossModel::Correlated, 2)
    };
    let sol = solve(&params, Solver::Explicit).unwrap();
    let pa = 1.0 / (1.0 + p * q + (1.0 - q * q) / q);
    let (pc, pe) = (p * q * pa, pa * (1.0 - q * q) / q);
    assert_eq!(sol.fast_retransmits_per_round, 0.0);
    assert_close(sol.timeouts_per_round, pa * p + pc + pe * p, 1e-12);
}

#[test]
fn loss_event_rates_equal_the_transition_mass_into_fast_retransmit_and_backoff() {
    // Fast retransmit: CA (w, x < w) -> CA (floor(w/2), .) (eq. 14); timeout: any move into a backoff
    // state (§4.3.1-§4.3.3), counted from `transitions()` under the explicit solver's pi.
    for loss in [LossModel::Correlated, LossModel::Independent] {
        for p in [1e-3, 0.03] {
            let params = small_path(p, loss, 24);
            let (sol, st) = solve_full(&params, Solver::Explicit).unwrap();
            let ch = Chain::new(&params, 24, true);
            let (mut fr, mut to) = (0.0, 0.0);
            for (i, &v) in st.pi.iter().enumerate() {
                let s = ch.state(i);
                for (t, prob, _) in ch.transitions(s) {
                    match (s, t) {
                        (_, State::Eb { .. }) => to += v * prob,
                        (State::Ca { w, x }, State::Ca { .. }) if x < w => fr += v * prob,
                        _ => {}
                    }
                }
            }
            assert!(fr > 0.0 && to > 0.0);
            // 1 - P(timeout) against a sum of transition masses: equal up to rounding (1e-10 seen).
            assert_close(sol.fast_retransmits_per_round / fr, 1.0, 1e-9);
            assert_close(sol.timeouts_per_round / to, 1.0, 1e-9);
            let structured = solve(&params, Solver::Structured).unwrap();
            assert_close(structured.fast_retransmits_per_round / fr, 1.0, 1e-9);
            assert_close(structured.timeouts_per_round / to, 1.0, 1e-9);
        }
    }
}

#[test]
fn explicit_and_structured_solvers_agree_to_1e9() {
    for loss in both() {
        for p in [1e-4, 1e-3, 1e-2, 0.2, 0.7] {
            for (w, d_ms) in [
                (2u64, 40.0),
                (3, 40.0),
                (5, 5.0),
                (12, 40.0),
                (40, 100.0),
                (85, 40.0),
                (117, 40.0),
            ] {
                let params = Params {
                    p,
                    loss,
                    d_ms,
                    window_packets: Some(w),
                    ..Params::default()
                };
                let (a, pa) = solve_full(&params, Solver::Explicit).unwrap();
                let (b, pb) = solve_full(&params, Solver::Structured).unwrap();
                let l1: f64 = pa.pi.iter().zip(&pb.pi).map(|(x, y)| (x - y).abs()).sum();
                let tag = format!("{loss:?} p={p} W={w} d={d_ms}");
                assert!(l1 <= 1e-9, "{tag}: pi differs by {l1:e}");
                let rel = (a.throughput_pps - b.throughput_pps).abs() / a.throughput_pps;
                assert!(
                    rel <= 1e-9,
                    "{tag}: eta {} vs {}",
                    a.throughput_pps,
                    b.throughput_pps
                );
                assert!(
                    a.residual <= REQUIRED_RESIDUAL && b.residual <= REQUIRED_RESIDUAL,
                    "{tag}"
                );
                assert_eq!((a.states, a.nonzeros), (b.states, b.nonzeros), "{tag}");
                assert_eq!((a.solver, b.solver), (Solver::Explicit, Solver::Structured));
            }
        }
    }
}

#[test]
fn the_structured_residual_is_the_true_residual_of_the_explicit_matrix() {
    // Recompute ||pi Q - pi||_1 for the structured answer with the untrimmed explicit Q.
    for loss in both() {
        for p in [1e-3, 0.05] {
            let params = Params {
                p,
                loss,
                window_packets: Some(150),
                ..Params::default()
            };
            let (sol, st) = solve_full(&params, Solver::Structured).unwrap();
            let exact = Chain::new(&params, 150, true);
            let r = explicit::residual(&explicit::build(&exact), &st.pi);
            assert!(
                r <= sol.residual.max(1e-15) * 10.0 && r <= REQUIRED_RESIDUAL,
                "{loss:?} p={p}: {r:e} vs {:e}",
                sol.residual
            );
        }
    }
}

#[test]
fn large_buffers_solve_below_the_required_residual() {
    for loss in both() {
        for p in [1e-4, 1e-2] {
            let params = Params {
                p,
                loss,
                rbuf_bytes: 1_000_000,
                ..Params::default()
            };
            let s = solve(&params, Solver::Auto).unwrap();
            assert_eq!(s.window_packets, 666); // A11: 1 MB = 1e6 B over 1500 B packets
            assert!(
                s.residual <= REQUIRED_RESIDUAL,
                "{loss:?} p={p}: {:e}",
                s.residual
            );
            assert_eq!(s.solver, Solver::Structured);
            // 222,110 CA (eq. 12) + 9 entry + 7 later backoff (eq. 18: RTO = 0.1217 s, M = 8) + 36 SS.
            assert_eq!(s.states, 222_162);
        }
    }
}

fn eta(params: &Params) -> f64 {
    solve(params, Solver::Structured).unwrap().throughput_pps
}

/// eta must strictly fall (or rise) at every step of `xs`, for both loss models; returns the points.
fn assert_monotone(
    what: &str,
    xs: &[f64],
    rising: bool,
    set: impl Fn(f64, LossModel) -> Params,
) -> Vec<(Params, f64)> {
    let mut out = Vec::new();
    for loss in both() {
        let mut prev: Option<f64> = None;
        for &x in xs {
            let params = set(x, loss);
            let e = eta(&params);
            if let Some(p) = prev {
                assert!(
                    if rising { e > p } else { e < p },
                    "{loss:?}: eta at {what} = {x} is {e}, after {p}"
                );
            }
            prev = Some(e);
            out.push((params, e));
        }
    }
    out
}

#[test]
fn throughput_falls_with_loss_rate() {
    let ps = [1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3];
    assert_monotone("p", &ps, false, |p, loss| Params {
        p,
        loss,
        ..Params::default()
    });
}

#[test]
fn throughput_falls_with_delay() {
    let ds = [0.0, 5.0, 10.0, 20.0, 40.0, 70.0, 100.0, 200.0, 400.0];
    assert_monotone("d_ms", &ds, false, |d_ms, loss| Params {
        d_ms,
        loss,
        ..Params::default()
    });
}

#[test]
fn throughput_rises_with_bandwidth_and_never_exceeds_it() {
    let bs = [0.5, 1.0, 2.0, 5.0, 10.0, 21.0, 50.0, 100.0, 1000.0];
    for (params, e) in assert_monotone("b_mbps", &bs, true, |b_mbps, loss| Params {
        b_mbps,
        loss,
        ..Params::default()
    }) {
        assert!(
            e <= params.b_pps(),
            "{:?}: eta {e} above the link's {} pkt/s",
            params.loss,
            params.b_pps()
        );
    }
}

#[test]
fn throughput_rises_with_the_window_until_it_saturates_past_the_bdp() {
    // b d = 1750 pkt/s x 0.04 s = 70 packets at the focus point.
    for loss in both() {
        for p in [1e-4, 1e-3, 1e-2] {
            let base = Params {
                p,
                loss,
                ..Params::default()
            };
            let bdp = base.b_pps() * base.d_ms / 1000.0;
            let windows: Vec<u64> = (2..=300).collect();
            let curve: Vec<f64> = throughput_curve(&base, &windows)
                .unwrap()
                .iter()
                .map(|s| s.throughput_pps)
                .collect();
            let mut best: f64 = 0.0;
            for (&w, &e) in windows.iter().zip(&curve) {
                let tag = format!("{loss:?} p={p} W={w}");
                if (w as f64) <= bdp + 1.0 {
                    assert!(e > best, "{tag}: {e} does not rise above {best}");
                } else {
                    // Past b d + 1 a larger window only queues: eta stays below b and within 0.1% of
                    // its running maximum (odd W halve to the same floor(W/2) as W - 1, and at
                    // p = 1e-4 eta peaks near W = 230 and then eases by ~1.4e-4 as rounds lengthen).
                    assert!(
                        e <= base.b_pps() && e >= best * (1.0 - 1e-3),
                        "{tag}: {e} vs best {best}"
                    );
                }
                best = best.max(e);
            }
            // Saturation: the last hundred windows change eta by less than 1%.
            let (a, z) = (curve[windows.len() - 100], curve[windows.len() - 1]);
            assert!((z - a).abs() <= 0.01 * z, "{loss:?} p={p}: {a} -> {z}");
        }
    }
}

#[test]
fn the_focus_path_at_low_loss_is_window_and_link_limited() {
    // p = 1e-4, b = 21 Mbit/s, d = 40 ms, r = 128 KB: W = 85 > b d = 70, so W / RTT(W) = b (eq. 8).
    for loss in both() {
        let params = Params {
            p: 1e-4,
            loss,
            ..Params::default()
        };
        let s = solve(&params, Solver::Auto).unwrap();
        assert_eq!(s.window_packets, 85);
        let ch = Chain::new(&params, 85, false);
        let limit = params.b_pps().min(85.0 / ch.rtt(85));
        assert!(
            s.throughput_pps <= limit && s.throughput_pps >= 0.9 * limit,
            "{loss:?}: {} vs {limit}",
            s.throughput_pps
        );
        // At p = 1e-2 the same path is loss-limited, far below the link.
        let lossy = solve(&Params { p: 1e-2, ..params }, Solver::Auto).unwrap();
        assert!(
            lossy.throughput_pps < 0.25 * limit,
            "{loss:?}: {}",
            lossy.throughput_pps
        );
    }
}

#[test]
fn a_loss_that_takes_the_rest_of_its_round_costs_more_than_an_isolated_loss() {
    // Eq. 7 loses the whole tail of the round after its first loss, eq. 6 only the packets it draws:
    // at equal p the correlated chain sees more losses per event, so more timeouts, and less eta.
    let c = eta(&Params {
        loss: LossModel::Correlated,
        ..Params::default()
    });
    let i = eta(&Params {
        loss: LossModel::Independent,
        ..Params::default()
    });
    assert!(i > c, "independent {i} vs correlated {c}");
}

#[test]
fn bad_input_names_its_field_and_allocates_nothing() {
    let ok = Params::default();
    let cases: Vec<(Params, &str)> = vec![
        (
            Params {
                p: 0.0,
                ..ok.clone()
            },
            "field `p`",
        ),
        (
            Params {
                p: 1.0,
                ..ok.clone()
            },
            "field `p`",
        ),
        (
            Params {
                p: f64::NAN,
                ..ok.clone()
            },
            "field `p`",
        ),
        (
            Params {
                b_mbps: 0.0,
                ..ok.clone()
            },
            "field `b_mbps`",
        ),
        (
            Params {
                b_mbps: f64::INFINITY,
                ..ok.clone()
            },
            "field `b_mbps`",
        ),
        (
            Params {
                d_ms: -1.0,
                ..ok.clone()
            },
            "field `d_ms`",
        ),
        (
            Params {
                d_ms: f64::NAN,
                ..ok.clone()
            },
            "field `d_ms`",
        ),
        (
            Params {
                rto_max_s: 0.0,
                ..ok.clone()
            },
            "field `rto_max_s`",
        ),
        (
            Params {
                packet_bytes: 0,
                ..ok.clone()
            },
            "field `packet_bytes`",
        ),
        (
            Params {
                rbuf_bytes: 1499,
                ..ok.clone()
            },
            "field `rbuf_bytes`",
        ),
        (
            Params {
                rbuf_bytes: 2999,
                ..ok.clone()
            },
            "field `window_packets`",
        ),
        (
            Params {
                window_packets: Some(1),
                ..ok.clone()
            },
            "W = 1",
        ),
        (
            Params {
                rbuf_bytes: u64::MAX,
                ..ok.clone()
            },
            "above the bound 8192",
        ),
    ];
    for (params, want) in cases {
        let e = solve(&params, Solver::Auto).unwrap_err().to_string();
        assert!(e.contains(want), "{params:?}: `{e}` lacks `{want}`");
    }
    let big = Params {
        window_packets: Some(2666),
        ..ok.clone()
    };
    let e = solve(&big, Solver::Explicit).unwrap_err();
    assert!(matches!(e, CmtMarkovError::ExplicitTooLarge { .. }), "{e}");
    assert!(LossModel::parse("bursty")
        .unwrap_err()
        .to_string()
        .contains("field `loss`"));
    assert!(Solver::parse("lu")
        .unwrap_err()
        .to_string()
        .contains("field `solver`"));
    assert!(throughput_curve(&ok, &[2, 1])
        .unwrap_err()
        .to_string()
        .contains("W = 1"));
}

#[test]
fn window_packets_overrides_the_buffer_and_kb_is_1000_bytes() {
    let a = solve(
        &Params {
            rbuf_bytes: 176_000,
            ..Params::default()
        },
        Solver::Auto,
    )
    .unwrap();
    assert_eq!(a.window_packets, 117); // A11: 176 KB = 176,000 B
    let b = solve(
        &Params {
            rbuf_bytes: 1,
            window_packets: Some(117),
            ..Params::default()
        },
        Solver::Auto,
    )
    .unwrap();
    assert_eq!(a.throughput_pps, b.throughput_pps);
}

#[test]
fn trimmed_binomial_rows_account_for_all_their_mass() {
    let params = Params {
        p: 0.3,
        loss: LossModel::Independent,
        window_packets: Some(600),
        ..Params::default()
    };
    let ch = Chain::new(&params, 600, false);
    if let chain::Loss::Independent {
        rows, max_missing, ..
    } = &ch.loss
    {
        for (x, r) in rows.iter().enumerate() {
            let kept: f64 = r.pmf.iter().sum();
            assert!(
                (kept + r.missing - 1.0).abs() < 1e-12,
                "x={x}: {kept} + {}",
                r.missing
            );
            assert!(r.missing <= *max_missing);
        }
        assert!(
            rows[600].pmf.len() < 300,
            "row 600 kept {} entries",
            rows[600].pmf.len()
        );
        assert!(*max_missing < 1e-18);
    } else {
        panic!("independent loss builds binomial rows");
    }
}

#[test]
fn solving_twice_gives_bit_identical_answers() {
    let params = Params {
        p: 3e-3,
        loss: LossModel::Independent,
        rbuf_bytes: 300_000,
        ..Params::default()
    };
    let (a, pa) = solve_full(&params, Solver::Auto).unwrap();
    let (b, pb) = solve_full(&params, Solver::Auto).unwrap();
    assert_eq!(pa.pi, pb.pi);
    assert_eq!(
        (a.throughput_pps, a.iterations, a.residual),
        (b.throughput_pps, b.iterations, b.residual)
    );
}

#[test]
fn throughput_curve_matches_single_solves() {
    let base = Params {
        p: 2e-3,
        ..Params::default()
    };
    let curve = throughput_curve(&base, &[2, 7, 64]).unwrap();
    for s in curve {
        let one = solve(
            &Params {
                window_packets: Some(s.window_packets),
                ..base.clone()
            },
            Solver::Auto,
        )
        .unwrap();
        assert_eq!(s.throughput_pps, one.throughput_pps);
    }
}

#[test]
fn a_vanishing_loss_rate_gives_the_window_limited_rate_with_both_solvers() {
    // As p -> 0 the chain sits at (W, W): W packets per eq. 8 round, the link rate b once W > b d
    // (W = 8 > b d = 4 here: 100 packets/s). 1 - p rounds to 1 below 1.1e-16. Eq. 6 under the
    // structured solver is left out: its rows trim every loss below 1e-22 (docs/deviations.md).
    for loss in both() {
        for p in [1e-12, 1e-30, 1e-300] {
            for solver in [Solver::Explicit, Solver::Structured] {
                if loss == LossModel::Independent && solver == Solver::Structured && p < 1e-20 {
                    continue;
                }
                let s = solve(&small_path(p, loss, 8), solver)
                    .unwrap_or_else(|e| panic!("{p} {solver:?}: {e}"));
                assert_close(s.throughput_pps, 100.0, 1e-9);
                assert!(
                    s.residual <= 1e-12,
                    "{p} {solver:?}: residual {}",
                    s.residual
                );
            }
        }
    }
}

#[test]
fn a_subnormal_loss_rate_is_refused_naming_p() {
    // Below f64::MIN_POSITIVE, 1/p overflows and the chain's probabilities lose their precision.
    let e = solve(
        &small_path(5e-324, LossModel::Correlated, 8),
        Solver::Structured,
    )
    .unwrap_err();
    assert_eq!(e, CmtMarkovError::LossRate(5e-324));
    assert!(e.to_string().starts_with("field `p`:"), "{e}");
}
