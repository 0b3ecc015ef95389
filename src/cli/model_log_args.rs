//! `hivectl model-log NAME [-n N]`'s arguments, beside the table
//! (`model_log`), which reads the table layout of `args`.

use clap::Args;

use crate::wire::ident::Ident;
use crate::wire::model_log::DEFAULT_MODEL_LOG_LIMIT;

use super::complete::agent_names;

/// Show an agent's requests to the model as the hive's model gateway
/// metered them, oldest first: time, route, model, status, input, output,
/// cache-write and cache-read tokens, list cost (from the price table
/// shipped with hive-c0re; "-" for a model not in it), duration, the
/// upstream's request id, and what went wrong.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Examples:\n  hivectl model-log alice\n  hivectl model-log alice -n 500\n  \
                  hivectl model-log alice --json"
)]
pub struct ModelLogArgs {
    #[arg(add = agent_names())]
    pub name: Ident,
    /// How many of its newest requests to show (1 to 10000).
    #[arg(short = 'n', long = "limit", value_name = "N", default_value_t = DEFAULT_MODEL_LOG_LIMIT)]
    pub limit: u32,
}
