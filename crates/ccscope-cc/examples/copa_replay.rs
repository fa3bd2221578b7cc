//! Replay a Copa event script through ccscope's Copa and print its decisions, one line per event, in
//! the reference harness's format (experiments/copa_reference/README.md):
//! `cargo run --release -p ccscope-cc --example copa_replay -- script.txt > ccscope.txt`.

#[path = "../tests/copa_replay/mod.rs"]
mod copa_replay;

fn main() {
    let path = std::env::args().nth(1).expect("a script file");
    let script = std::fs::read_to_string(&path).expect("readable script");
    for d in copa_replay::replay(&script) {
        println!("{}", copa_replay::format(&d));
    }
}
