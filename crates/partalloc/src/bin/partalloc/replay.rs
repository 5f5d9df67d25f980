//! x
use crate::common::CliError;
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}
pub(crate) fn run(_a: &Args) -> Result<(), CliError> {
    Ok(())
}
