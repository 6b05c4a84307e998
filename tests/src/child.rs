//! One case of a test run again in a child process, under a limit on its
//! address space: a test of "this does not exhaust memory" or "this does
//! not overflow the stack" must fail, not kill the test runner, when it is
//! wrong. The test binary re-runs itself (`current_exe`) for the one test,
//! with [`CASE_VAR`] naming the case; the child's exit status, stdout and
//! stderr come back.

use std::process::{Command, ExitStatus};

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
}

/// Runs test `test` (its full name, as libtest prints it) of this binary
/// again in a child process with `case()` = `case`, its address space
/// limited to `address_space` bytes (`RLIMIT_AS`, on Linux; elsewhere
/// without a limit).
pub fn run_case(test: &str, case: &str, address_space: u64) -> Outcome {
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
    let out = cmd.output().expect("the child process runs");
    Outcome {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
