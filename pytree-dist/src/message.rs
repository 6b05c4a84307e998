//! Messages between ranks as typed values: each is a serde type, sent as
//! JSON bytes through [`Backend::all_gather`] and read back into the same
//! type ([`gather`]). A rank whose bytes do not read as the type (another
//! version of the program) shows as `None`, never as a panic.

use pytree_std::Error;
use serde::de::DeserializeOwned;
#[cfg(feature = "checkpoint")]
use serde::Deserialize;
use serde::Serialize;

use crate::backend::Backend;

/// Every rank's `mine`, in rank order: `None` for a rank whose message
/// did not read as an `M`.
pub(crate) fn gather<M>(backend: &dyn Backend, mine: &M) -> Result<Vec<Option<M>>, Error>
where
    M: Serialize + DeserializeOwned,
{
    let bytes = serde_json::to_vec(mine)
        .map_err(|e| Error::custom(format!("a message to the other ranks: {e}")))?;
    Ok(backend
        .all_gather(&bytes)?
        .iter()
        .map(|b| serde_json::from_slice(b).ok())
        .collect())
}

/// A rank's account of one step of a protocol (a checkpoint save): what
/// it wrote, or why it failed.
#[cfg(feature = "checkpoint")]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Report {
    /// Why this rank cannot go on (`None`: it can).
    pub error: Option<String>,
    /// The file it wrote, if any.
    pub file: Option<String>,
    /// Each tensor it wrote, with its size in bytes.
    pub tensors: Vec<(String, usize)>,
}

#[cfg(feature = "checkpoint")]
impl Report {
    /// A report of `result`: nothing written, or why not.
    pub fn of(result: Result<(), String>) -> Report {
        Report {
            error: result.err(),
            ..Report::default()
        }
    }
}

/// Every rank's report, or an error on every rank naming each rank that
/// failed (`what`: the step, for the message) and each whose report did
/// not read.
#[cfg(feature = "checkpoint")]
pub(crate) fn reports(
    backend: &dyn Backend,
    mine: &Report,
    what: &str,
) -> Result<Vec<Report>, Error> {
    let all = gather(backend, mine)?;
    let failures: Vec<String> = all
        .iter()
        .enumerate()
        .filter_map(|(r, report)| match report {
            None => Some(format!("rank {r}: its report did not read")),
            Some(Report { error: Some(e), .. }) => Some(format!("rank {r}: {e}")),
            Some(_) => None,
        })
        .collect();
    if failures.is_empty() {
        Ok(all.into_iter().flatten().collect())
    } else {
        Err(Error::custom(format!(
            "checkpoint save failed while {what}, no index written: {}",
            failures.join("; ")
        )))
    }
}

#[cfg(all(test, feature = "checkpoint"))]
mod tests {
    use super::*;
    use crate::local::Local;

    #[test]
    fn a_report_travels_as_itself_and_a_failure_names_its_rank() {
        let mine = Report {
            error: None,
            file: Some("model-00001-of-00001.safetensors".into()),
            tensors: vec![("w".into(), 8)],
        };
        assert_eq!(reports(&Local, &mine, "writing").unwrap(), [mine]);
        let err = reports(
            &Local,
            &Report::of(Err("disk full".into())),
            "writing the shards",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("while writing the shards, no index written: rank 0: disk full"),
            "{err}"
        );
    }
}
