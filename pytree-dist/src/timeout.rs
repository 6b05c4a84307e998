//! The collectives' timeout: its default, the environment variable that
//! sets it for a job, and the parser of its value. The watchdog that
//! applies it is the backend's (`Mpi`: module `mpi`).

use std::time::Duration;

use pytree_std::Error;

/// How long a collective waits for the other ranks before the job ends,
/// unless [`Dist::timeout`](crate::Dist::timeout) or [`TIMEOUT_ENV`] says
/// otherwise: 10 minutes, torch.distributed's default for NCCL. Long
/// enough for one rank's work between two collectives that the others
/// wait through (rank 0 loading a dataset before the first broadcast,
/// writing a checkpoint, an evaluation pass); short enough that a hung
/// job ends within minutes instead of burning its allocation.
///
/// ```
/// assert_eq!(pytree_dist::DEFAULT_TIMEOUT.as_secs(), 600);
/// ```
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The environment variable that sets the timeout of the job's
/// collectives, read by [`Dist::init`](crate::Dist::init) (and so by
/// [`run`](crate::run)): seconds (`30`, `2.5`), or `none` to wait for
/// ever; parsed by [`parse_timeout`].
///
/// ```
/// assert_eq!(pytree_dist::TIMEOUT_ENV, "PYTREE_DIST_TIMEOUT");
/// ```
pub const TIMEOUT_ENV: &str = "PYTREE_DIST_TIMEOUT";

/// Parses a timeout as [`TIMEOUT_ENV`] holds it: a number of seconds
/// greater than zero (`300`, `2.5`), or `none` (no timeout: `Ok(None)`).
/// Anything else is an error naming what was expected and what was found.
///
/// ```
/// use std::time::Duration;
/// use pytree_dist::parse_timeout;
/// assert_eq!(parse_timeout("2.5")?, Some(Duration::from_millis(2500)));
/// assert_eq!(parse_timeout("none")?, None);
/// assert!(parse_timeout("0").is_err());
/// assert!(parse_timeout("ten").is_err());
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn parse_timeout(text: &str) -> Result<Option<Duration>, Error> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let bad = |why: &str| {
        Error::custom(format!(
            "a timeout: expected a number of seconds greater than 0 (such as 300 or 2.5) or `none`, found {text:?}{why}"
        ))
    };
    let secs: f64 = t.parse().map_err(|_| bad(""))?;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(bad(""));
    }
    Duration::try_from_secs_f64(secs)
        .map(Some)
        .map_err(|_| bad(" (too large: use `none` for no timeout)"))
}

/// The timeout [`TIMEOUT_ENV`] sets, [`DEFAULT_TIMEOUT`] where it is not
/// set; an error naming the variable for a value [`parse_timeout`]
/// refuses.
pub(crate) fn timeout_from_env() -> Result<Option<Duration>, Error> {
    timeout_from(std::env::var_os(TIMEOUT_ENV).as_deref())
}

fn timeout_from(value: Option<&std::ffi::OsStr>) -> Result<Option<Duration>, Error> {
    let Some(value) = value else {
        return Ok(Some(DEFAULT_TIMEOUT));
    };
    let text = value.to_str().ok_or_else(|| {
        Error::custom(format!(
            "{TIMEOUT_ENV}: expected a number of seconds or `none`, found {value:?} (not UTF-8)"
        ))
    })?;
    parse_timeout(text).map_err(|e| Error::custom(format!("{TIMEOUT_ENV}: {}", e.kind())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn seconds_whole_and_fractional_and_none() {
        assert_eq!(
            parse_timeout("300").unwrap(),
            Some(Duration::from_secs(300))
        );
        assert_eq!(
            parse_timeout(" 0.25 ").unwrap(),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_timeout("1e3").unwrap(),
            Some(Duration::from_secs(1000))
        );
        assert_eq!(parse_timeout("none").unwrap(), None);
        assert_eq!(parse_timeout("NONE").unwrap(), None);
    }

    #[test]
    fn bad_values_are_errors_naming_what_was_expected_and_found() {
        for bad in [
            "", "0", "-1", "0.0", "ten", "5s", "inf", "NaN", "1e400", "1e30",
        ] {
            let e = parse_timeout(bad).unwrap_err().to_string();
            assert!(
                e.contains("expected a number of seconds greater than 0")
                    && e.contains(&format!("found {bad:?}")),
                "{bad}: {e}"
            );
        }
        assert!(parse_timeout("1e30")
            .unwrap_err()
            .to_string()
            .contains("too large"));
    }

    #[test]
    fn the_variable_unset_set_and_bad() {
        assert_eq!(timeout_from(None).unwrap(), Some(DEFAULT_TIMEOUT));
        assert_eq!(
            timeout_from(Some(OsStr::new("3"))).unwrap(),
            Some(Duration::from_secs(3))
        );
        assert_eq!(timeout_from(Some(OsStr::new("none"))).unwrap(), None);
        let e = timeout_from(Some(OsStr::new("soon")))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("PYTREE_DIST_TIMEOUT: a timeout: expected") && e.contains("found \"soon\""),
            "{e}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let e = timeout_from(Some(OsStr::from_bytes(b"\xff")))
                .unwrap_err()
                .to_string();
            assert!(e.contains("not UTF-8"), "{e}");
        }
    }
}
