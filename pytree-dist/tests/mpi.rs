//! The multi-process tests (feature `mpi`): this binary is its own driver.
//! Run by `cargo test -p pytree-dist --features mpi` (no arguments), it
//! runs each scenario as a world of one (MPI's singleton: the binary
//! started without a launcher) and under `mpirun -np 2` and `-np 3`, and
//! checks each run's exit status, time and output; `mpi --scenario NAME`
//! is one rank of one scenario.
//!
//! As root, `mpirun` needs `OMPI_ALLOW_RUN_AS_ROOT=1
//! OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`, and more ranks than cores
//! `OMPI_MCA_rmaps_base_oversubscribe=1`: the driver sets them for the
//! `mpirun` it starts.

use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use pytree_std::half::f16;
use pytree_std::ndarray::{Array1, Array2, ArrayD};
use pytree_std::{AnyArray, PyTree};

#[path = "mpi/scenarios.rs"]
mod scenarios;

/// One rank's check failed: an error naming what (the scenario's rank
/// returns it, and `pytree_dist::run` ends the job with it).
macro_rules! ensure {
    ($cond:expr, $($msg:tt)*) => {
        let holds: bool = $cond;
        if !holds {
            return Err(pytree_std::Error::custom(format!("{}:{}: {}", file!(), line!(), format!($($msg)*))));
        }
    };
}
pub(crate) use ensure;

/// How long one `mpirun` may take before the test fails (a hang).
const TIME_LIMIT: Duration = Duration::from_secs(180);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--scenario") {
        let name = args.get(i + 1).cloned().unwrap_or_default();
        return scenarios::run(&name);
    }
    driver()
}

/// The outcome of one launch.
struct Outcome {
    ok: bool,
    took: Duration,
    output: String,
}

impl Outcome {
    /// Prints whether scenario run `label` passed, adds its output to
    /// `failures` where it did not, and returns whether it passed.
    fn report(&self, label: &str, failures: &mut Vec<String>) -> bool {
        println!(
            "scenario {label}: {} in {:.1?}",
            if self.ok { "ok" } else { "FAILED" },
            self.took
        );
        if !self.ok {
            failures.push(format!("{label}:\n{}", self.output));
        }
        self.ok
    }
}

/// Runs scenario `name` on `ranks` processes (`None`: started directly,
/// a world of one), killing it after [`TIME_LIMIT`].
fn launch(name: &str, ranks: Option<usize>) -> Outcome {
    let dir = std::env::temp_dir().join(format!(
        "pytree-dist-mpi-{name}-{}-{}",
        ranks.unwrap_or(1),
        std::process::id()
    ));
    let o = launch_with(
        name,
        ranks,
        &[("PYTREE_DIST_TEST_DIR", dir.display().to_string())],
    );
    std::fs::remove_dir_all(&dir).ok();
    o
}

/// How many launches the driver made.
static LAUNCHED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// [`launch`] with more environment variables.
fn launch_with(name: &str, ranks: Option<usize>, env: &[(&str, String)]) -> Outcome {
    LAUNCHED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = match ranks {
        None => Command::new(&exe),
        Some(n) => {
            let mut c = Command::new("mpirun");
            c.args(["-np", &n.to_string()]).arg(&exe);
            c
        }
    };
    cmd.args(["--scenario", name])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("mpirun starts (is Open MPI installed?)");
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait on mpirun") {
            break Some(status);
        }
        if start.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = start.elapsed();
    let out = child.wait_with_output().expect("the output of mpirun");
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Outcome {
        ok: status.is_some_and(|s| s.success()),
        took,
        output: if status.is_none() {
            format!("{output}\n(killed after {TIME_LIMIT:?}: a hang)")
        } else {
            output
        },
    }
}

fn driver() -> ExitCode {
    let mut failures = Vec::new();
    for &name in scenarios::PASSING {
        for ranks in [None, Some(2), Some(3)] {
            let how = ranks.map_or("alone".to_string(), |n| format!("on {n} ranks"));
            launch(name, ranks).report(&format!("{name} {how}"), &mut failures);
        }
    }
    // Checkpoints: saved at N ranks, resumed at M (alone: one process).
    let base = std::env::temp_dir().join(format!("pytree-dist-mpi-test-{}", std::process::id()));
    for (saved, resumed) in [(2, [None, Some(3)]), (3, [Some(2), Some(2)])] {
        let dir = base.join(format!("saved-at-{saved}"));
        let env = [
            ("PYTREE_DIST_TEST_DIR", dir.display().to_string()),
            ("PYTREE_DIST_SAVED_RANKS", saved.to_string()),
        ];
        let o = launch_with("checkpoint_save", Some(saved), &env);
        if !o.report(&format!("checkpoint_save on {saved} ranks"), &mut failures) {
            continue;
        }
        for ranks in resumed.into_iter().take(if saved == 3 { 1 } else { 2 }) {
            let how = ranks.map_or("alone".to_string(), |n| format!("on {n} ranks"));
            let label = format!("checkpoint_resume (saved on {saved}) {how}");
            launch_with("checkpoint_resume", ranks, &env).report(&label, &mut failures);
        }
    }
    // A rank killed during a save: no index is left.
    for ranks in [2, 3] {
        let dir = base.join(format!("killed-at-{ranks}"));
        let o = launch_with(
            "checkpoint_killed",
            Some(ranks),
            &[("PYTREE_DIST_TEST_DIR", dir.display().to_string())],
        );
        let index = dir.join("killed").join(pytree_dist::checkpoint::INDEX);
        let complete = pytree_std::checkpoint::Load::new().open(&index).is_ok();
        let said = o.output.contains("rank 1 is killed during the save");
        println!(
            "scenario checkpoint_killed on {ranks} ranks: exit {}, {:.1?}, index {}",
            if o.ok {
                "success (wrong)"
            } else {
                "failure (right)"
            },
            o.took,
            if complete {
                "PRESENT (wrong)"
            } else {
                "absent (right)"
            }
        );
        if o.ok || complete || !said || o.took > Duration::from_secs(60) {
            failures.push(format!("checkpoint_killed on {ranks} ranks:\n{}", o.output));
        }
    }
    std::fs::remove_dir_all(&base).ok();
    // A rank that panics at step 3, or returns an error, ends the whole
    // job promptly, with its message; the others were waiting in a
    // collective.
    for (name, message) in [
        ("panic_at_step_3", "rank 1 panics at step 3 on purpose"),
        (
            "error_at_step_3",
            "rank 1 returns an error at step 3 on purpose",
        ),
    ] {
        for ranks in [2, 3] {
            let o = launch(name, Some(ranks));
            let prompt = o.took < Duration::from_secs(60);
            let said = o.output.contains(message);
            println!(
                "scenario {name} on {ranks} ranks: exit {}, {:.1?}, message {}",
                if o.ok {
                    "success (wrong)"
                } else {
                    "failure (right)"
                },
                o.took,
                if said { "printed" } else { "MISSING" }
            );
            if o.ok || !prompt || !said {
                failures.push(format!("{name} on {ranks} ranks:\n{}", o.output));
            }
        }
    }
    watchdog(&mut failures);
    // A summary in libtest's words, which .ci/run counts.
    let total = LAUNCHED.load(std::sync::atomic::Ordering::SeqCst);
    for f in &failures {
        eprintln!("---- {f}");
    }
    println!(
        "\ntest result: {}. {} passed; {} failed (multi-process scenarios)",
        if failures.is_empty() { "ok" } else { "FAILED" },
        total - failures.len(),
        failures.len()
    );
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The collectives' timeout of the watchdog's scenarios, in seconds.
const STALL_TIMEOUT: f64 = 3.0;

/// The watchdog (issue 38): rank 1 sleeps, is stopped, or leaves `run` at
/// step 3 (or drops a `Dist` it made without `run`, or is stopped inside
/// a blocking in-place bucket), with
/// `PYTREE_DIST_TIMEOUT=3`: the job ends non-zero, within the timeout plus
/// a few seconds of the stall (at once when rank 1 left), with a message
/// naming the collective, the step and the rank. Prints the time from the
/// stall (as rank 1 printed it) to `mpirun`'s exit (BENCHMARKS.md).
fn watchdog(failures: &mut Vec<String>) {
    let timeout = [("PYTREE_DIST_TIMEOUT", STALL_TIMEOUT.to_string())];
    let stalled = [
        "timeout: all_reduce_mean (step 3, collective #7) waited",
        "rank(s) 1 did not arrive: rank(s) 1 did not answer",
    ];
    let left = [
        "rank 1 left run at step 3 after 6 collectives, while rank",
        "still calls all_reduce_mean (step 3, collective #7)",
    ];
    let cases: [(&str, &[&str], f64); 5] = [
        ("stall_sleep", &stalled, STALL_TIMEOUT + 4.0),
        ("stall_stop", &stalled, STALL_TIMEOUT + 4.0),
        ("stall_leave", &left, 3.0),
        ("stall_drop", &left, 3.0),
        (
            "stall_in_place",
            &[
                "timeout: a big all-reduce (step 3, collective #1) waited",
                "inside MPI_Allreduce (an in-place bucket)",
            ],
            STALL_TIMEOUT + 4.0,
        ),
    ];
    for (name, said, bound) in cases {
        for ranks in [2, 3] {
            let o = launch_with(name, Some(ranks), &timeout);
            let ended = unix_ms();
            let stall = o
                .output
                .split("stalled at unix ms ")
                .nth(1)
                .and_then(|t| t.split(')').next())
                .and_then(|t| t.parse::<u128>().ok());
            let to_end = stall.map(|t| ended.saturating_sub(t) as f64 / 1000.0);
            let missing: Vec<&&str> = said.iter().filter(|m| !o.output.contains(**m)).collect();
            println!(
                "scenario {name} on {ranks} ranks: exit {}, {:.1?}, stall to end {} (timeout {STALL_TIMEOUT} s, bound {bound} s), message {}",
                if o.ok { "success (wrong)" } else { "failure (right)" },
                o.took,
                to_end.map_or("UNKNOWN".to_string(), |t| format!("{t:.2} s")),
                if missing.is_empty() { "printed".to_string() } else { format!("MISSING {missing:?}") }
            );
            if o.ok || !missing.is_empty() || to_end.is_none_or(|t| t > bound) {
                failures.push(format!("{name} on {ranks} ranks:\n{}", o.output));
            }
        }
    }
    // A timeout that is not one: every rank says so, the job fails.
    let o = launch_with(
        "collectives",
        Some(2),
        &[("PYTREE_DIST_TIMEOUT", "soon".to_string())],
    );
    let said = o
        .output
        .contains("PYTREE_DIST_TIMEOUT: a timeout: expected a number of seconds greater than 0");
    println!(
        "scenario collectives with PYTREE_DIST_TIMEOUT=soon: exit {}, message {}",
        if o.ok {
            "success (wrong)"
        } else {
            "failure (right)"
        },
        if said { "printed" } else { "MISSING" }
    );
    if o.ok || !said {
        failures.push(format!("PYTREE_DIST_TIMEOUT=soon:\n{}", o.output));
    }
}

/// Now, in milliseconds since the Unix epoch.
fn unix_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// A model-like tree of several leaf kinds: f32 matrices and vectors, an
/// f64 scalar, an f16 vector, an i64 vector (left alone by the
/// all-reduce), a static name.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Model {
    pub layers: Vec<Layer>,
    pub scale: AnyArray,
    pub half: AnyArray,
    pub ids: AnyArray,
    #[pytree(static)]
    pub name: String,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Layer {
    pub w: AnyArray,
    pub b: AnyArray,
}

/// The model as rank `r` holds it: integer-valued floats, so that sums in
/// any order are exact.
pub fn model(r: usize, sizes: &[usize]) -> Model {
    let layers = sizes
        .windows(2)
        .enumerate()
        .map(|(l, io)| Layer {
            w: Array2::from_shape_fn((io[0], io[1]), |(i, j)| {
                ((i * 7 + j * 3 + l + r * 5) % 11) as f32
            })
            .into(),
            b: Array1::from_shape_fn(io[1], |j| (j + r) as f32).into(),
        })
        .collect();
    Model {
        layers,
        scale: ArrayD::from_elem(vec![], (r * 3 + 1) as f64).into(),
        half: ArrayD::from_shape_fn(vec![5], |i| f16::from_f32((i[0] + 2 * r) as f32)).into(),
        ids: ArrayD::from_shape_fn(vec![3], |i| (i[0] + 100 * r) as i64).into(),
        name: "m".into(),
    }
}

/// The sum (or mean) over ranks of each float leaf, as the all-reduce
/// computes it: f32 and f16 in f32 (f16 rounded at the end), f64 in f64;
/// integer leaves those of `keep`.
pub fn combine(trees: &[Model], keep: &Model, mean: bool) -> Model {
    let all = leaves_of(trees);
    let n = if mean { trees.len() } else { 1 };
    // Divided by 1 (exact) for the sum.
    by_float_leaf(
        keep,
        |i| sum_over(&all, i, ToF32::to_f32).mapv(|v| v / n as f32),
        |i| sum_over(&all, i, f64_of).mapv(|v| v / n as f64),
    )
}

/// The sum over micro-batches of the mean over ranks (`micro[b][r]`: the
/// tree of rank `r` in micro-batch `b`), as ZeRO-2's accumulation
/// computes it: each mean in f32 (f64 for f64 leaves), the means added in
/// f32, f16 leaves rounded at the end; integer leaves those of `keep`.
pub fn accumulated(micro: &[Vec<Model>], keep: &Model) -> Model {
    let all: Vec<Vec<Vec<AnyArray>>> = micro.iter().map(|ranks| leaves_of(ranks)).collect();
    by_float_leaf(
        keep,
        |i| sum_of_means(&all, i, ToF32::to_f32, |v, n| v / n as f32),
        |i| sum_of_means(&all, i, f64_of, |v, n| v / n as f64),
    )
}

/// The sum over micro-batches (`all[b]`: the leaves of each rank) of the
/// mean over ranks of leaf `i`, each read by `get`, divided by `div`.
fn sum_of_means<A>(
    all: &[Vec<Vec<AnyArray>>],
    i: usize,
    get: impl Fn(&AnyArray) -> ArrayD<A> + Copy,
    div: impl Fn(A, usize) -> A,
) -> ArrayD<A>
where
    A: Clone + std::ops::Add<Output = A>,
{
    all.iter()
        .map(|ranks| sum_over(ranks, i, get).mapv(|v| div(v, ranks.len())))
        .reduce(|total, mean| total + mean)
        .expect("one micro-batch at least")
}

/// The leaves of each tree.
fn leaves_of(trees: &[Model]) -> Vec<Vec<AnyArray>> {
    trees
        .iter()
        .map(|t| pytree_std::flatten(t.clone()).0)
        .collect()
}

/// The sum over the trees' leaves `all` of leaf `i`, each read by `get`,
/// added in tree order.
fn sum_over<A>(all: &[Vec<AnyArray>], i: usize, get: impl Fn(&AnyArray) -> ArrayD<A>) -> ArrayD<A>
where
    A: Clone + std::ops::Add<Output = A>,
{
    all[1..]
        .iter()
        .fold(get(&all[0][i]), |acc, t| acc + get(&t[i]))
}

/// `keep` with its float leaf `i` replaced: by `f32s(i)` for f32 and f16
/// leaves (rounded to f16 for these), by `f64s(i)` for f64 leaves;
/// integer leaves kept.
fn by_float_leaf(
    keep: &Model,
    f32s: impl Fn(usize) -> ArrayD<f32>,
    f64s: impl Fn(usize) -> ArrayD<f64>,
) -> Model {
    let (kept, def) = pytree_std::flatten(keep.clone());
    let leaves: Vec<AnyArray> = kept
        .into_iter()
        .enumerate()
        .map(|(i, k)| match k {
            AnyArray::F32(_) => f32s(i).into(),
            AnyArray::F16(_) => f32s(i).mapv(f16::from_f32).into(),
            AnyArray::F64(_) => f64s(i).into(),
            other => other,
        })
        .collect();
    pytree_std::unflatten(&def, leaves).expect("the same structure")
}

/// An f64 leaf's array.
fn f64_of(a: &AnyArray) -> ArrayD<f64> {
    match a {
        AnyArray::F64(x) => x.clone(),
        _ => unreachable!("f64 leaves"),
    }
}

/// f32 and f16 arrays as f32.
pub(crate) trait ToF32 {
    fn to_f32(&self) -> ArrayD<f32>;
}
impl ToF32 for AnyArray {
    fn to_f32(&self) -> ArrayD<f32> {
        match self {
            AnyArray::F32(a) => a.clone(),
            AnyArray::F16(a) => a.mapv(|v| v.to_f32()),
            _ => unreachable!("float leaves"),
        }
    }
}
