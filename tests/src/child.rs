//! One case of a test run again in a child process, under a limit on its
//! address space (and, with [`run_case_timed`], on its time): a test of
//! "this does not exhaust memory", "this does not overflow the stack" or
//! "this does not hang" must fail, not kill or block the test runner, when
//! it is wrong. The test binary re-runs itself (`current_exe`) for the one
//! test, with [`CASE_VAR`] naming the case; the child's exit status,
//! stdout and stderr come back.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The environment variable that names the case a child runs.
pub const CASE_VAR: &str = "PYTREE_TEST_CASE";

/// The case this process was started for, if it is such a child.
pub fn case() -> Option<String> {
    std::env::var(CASE_VAR).ok()
}

/// What a child process did.
#[derive(Debug)]
pub struct Outcome {
    /// Exit status (a signal, such as SIGSEGV, is a failure).
    pub status: ExitStatus,
    /// What it printed.
    pub stdout: String,
    /// What it printed to stderr.
    pub stderr: String,
    /// True when it ran past the time limit of [`run_case_timed`] and was
    /// killed (its status is then the signal).
    pub timed_out: bool,
}

impl Outcome {
    /// Asserts that the child (of `case`) exited normally, in time, having
    /// printed `done`.
    pub fn assert_done(&self, case: &str) {
        assert!(
            !self.timed_out && self.status.success() && self.stdout.contains("done"),
            "{case}: {:?}{}\nstdout: {}\nstderr: {}",
            self.status,
            if self.timed_out { " (killed)" } else { "" },
            self.stdout,
            self.stderr
        );
    }
}

/// Case `case` of test `test`, in a child with `address_space` bytes and
/// `limit` of time (see [`run_case_timed`]): in the child, runs `body` and
/// prints `done`; in the test, runs the child and asserts it did so
/// ([`Outcome::assert_done`]).
pub fn in_child(test: &str, case: &str, address_space: u64, limit: Duration, body: impl FnOnce()) {
    if self::case().as_deref() == Some(case) {
        body();
        println!("done");
    } else {
        run_case_timed(test, case, address_space, limit).assert_done(case);
    }
}

/// Runs test `test` (its full name, as libtest prints it) of this binary
/// again in a child process with `case()` = `case`, its address space
/// limited to `address_space` bytes (`RLIMIT_AS`, on Linux; elsewhere
/// without a limit).
pub fn run_case(test: &str, case: &str, address_space: u64) -> Outcome {
    let out = command(test, case, address_space)
        .output()
        .expect("the child process runs");
    Outcome {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        timed_out: false,
    }
}

/// [`run_case`], killing the child if it runs longer than `limit` (a case
/// that would block forever, as an `open` of a FIFO does, then fails with
/// `timed_out`).
pub fn run_case_timed(test: &str, case: &str, address_space: u64, limit: Duration) -> Outcome {
    let mut child = command(test, case, address_space)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the child process runs");
    // Read both pipes meanwhile, so that a child writing much never blocks.
    let drain = |child: &mut Child, out: bool| {
        let mut pipe: Box<dyn Read + Send> = if out {
            Box::new(child.stdout.take().expect("piped stdout"))
        } else {
            Box::new(child.stderr.take().expect("piped stderr"))
        };
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let (stdout, stderr) = (drain(&mut child, true), drain(&mut child, false));
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            break status;
        }
        if start.elapsed() > limit {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("the killed child's status");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Outcome {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        timed_out,
    }
}

/// The command that runs `case` of `test` in this binary, its address
/// space limited to `address_space` bytes (Linux).
fn command(test: &str, case: &str, address_space: u64) -> Command {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CASE_VAR, case);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure runs in the forked child before `exec`; it
        // only calls `setrlimit` (async-signal-safe) on a value on its own
        // stack, and builds an `io::Error` from errno on failure, which
        // allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                let limit = libc::rlimit {
                    rlim_cur: address_space as libc::rlim_t,
                    rlim_max: address_space as libc::rlim_t,
                };
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = address_space;
    cmd
}
