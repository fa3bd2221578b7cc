//! `AnyController` calls a built-in controller through its enum variant (a static call); the same
//! controller behind `Box<dyn Controller>` (`AnyController::into_dyn`) must give the same run, bit for
//! bit: the enum forwards every hook, none falls back to a trait default.

use ccscope_cc::{AnyController, ParamError};
use ccscope_core::Dur;
use ccscope_sim::{bench, load_scenario, FlowSpec, RunResult, Scenario, Simulation};

fn both(sc: &Scenario) -> (RunResult, RunResult) {
    let by_enum = Simulation::new(sc).unwrap().run().0;
    let mut factory = |_: usize, f: &FlowSpec| -> Result<AnyController, ParamError> {
        Ok(ccscope_cc::build(&f.controller, &f.params)?.into_dyn())
    };
    let by_dyn = Simulation::with_factory(sc, &mut factory).unwrap().run().0;
    (by_enum, by_dyn)
}

fn assert_same(name: &str, sc: &Scenario) {
    let (a, b) = both(sc);
    let (a, b) = (format!("{a:?}"), format!("{b:?}"));
    assert!(
        a == b,
        "{name}: enum and dyn dispatch differ\n{a}\n---\n{b}"
    );
}

#[test]
fn every_controller_runs_the_same_through_the_enum_and_through_a_box() {
    // Random loss, bursts that also take the retransmissions, and a short queue: recovery, RTOs
    // (repeated ones too) and undo all happen.
    for info in ccscope_cc::CONTROLLERS {
        if info.transport == ccscope_cc::Transport::Cmt {
            continue; // an SCTP-CMT association drives its per-destination controllers itself
        }
        let text = format!(
            "seed = 7\nduration_s = 20\nbin_ms = 100\ncwnd_log = true\n[data_link]\nrate_mbps = 8\n\
             delay_ms = 15\nqueue = {{ kind = \"droptail\", packets = 12 }}\n\
             loss = {{ kind = \"gilbert_elliott\", p_gb = 0.003, p_bg = 0.1, loss_good = 0.01, loss_bad = 1.0 }}\n[ack_link]\nrate_mbps = 8\ndelay_ms = 15\n\
             [[flows]]\ncontroller = \"{}\"\ncount = 2\nstart_jitter_s = 1\n{}",
            info.name,
            // MIMD's window never meets its 100 ms RTT threshold here: capped, or it floods the link.
            if info.name == "mimd" { "max_window = 100.0\n" } else { "" }
        );
        let sc = load_scenario(&text, None, &[]).unwrap();
        let (a, b) = both(&sc);
        assert!(
            a.flows.iter().all(|f| f.delivered > 0),
            "{}: nothing delivered",
            info.name
        );
        let (a, b) = (format!("{a:?}"), format!("{b:?}"));
        assert!(
            a == b,
            "{}: enum and dyn dispatch differ\n{a}\n---\n{b}",
            info.name
        );
    }
}

#[test]
fn every_example_runs_the_same_through_the_enum_and_through_a_box() {
    let examples =
        bench::example_scenarios(&ccscope_sim::package_dir!(), Dur::from_ms(5_000)).unwrap();
    assert!(examples.len() > 20, "{} examples", examples.len());
    for (p, mut sc) in examples {
        sc.cwnd_log = true;
        assert_same(&p.display().to_string(), &sc);
    }
}
