//! A change of the tool set: the body of the `set_tools` tool, of `POST /_mock/set-tools` and
//! of [`Faults::set_tools`](crate::Faults::set_tools).

use serde::Deserialize;

/// The body of the `set_tools` tool and of `POST /_mock/set-tools`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetTools {
    /// Tools to add (they behave like `echo`); a built-in name re-enables that built-in.
    #[serde(default)]
    pub add: Vec<String>,
    /// Tools to remove; built-ins can be removed too.
    #[serde(default)]
    pub remove: Vec<String>,
    /// Whether to send `notifications/tools/list_changed` to every session.
    ///
    /// # Default
    /// `true`.
    #[serde(default = "default_true")]
    pub notify: bool,
}

fn default_true() -> bool {
    true
}

impl Default for SetTools {
    /// No change, and notify.
    fn default() -> Self {
        Self {
            add: Vec::new(),
            remove: Vec::new(),
            notify: true,
        }
    }
}
