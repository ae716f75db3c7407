//! `${…}` variables in the string values of a server entry, in every host's spelling.
//!
//! A file does not say which host wrote it, and the spellings do not collide, so every form is
//! understood everywhere:
//!
//! | form | host | value |
//! |---|---|---|
//! | `${NAME}` | Claude Code | the environment variable; unset is an error |
//! | `${NAME:-default}` | Claude Code | the variable if set (even empty), else `default` |
//! | `${env:NAME}` | VS Code, Cursor, Windsurf | the variable; unset is an empty string, as in those hosts |
//! | `${file:PATH}` | Windsurf | the file's contents, trailing newlines removed |
//! | `${workspaceFolder}`, `${workspaceFolderBasename}` | VS Code, Cursor | the project the `.vscode`/`.cursor` directory holding the file belongs to; elsewhere an error |
//! | `${userHome}` | VS Code, Cursor | `HOME` (`USERPROFILE` when unset) |
//! | `${pathSeparator}`, `${/}` | VS Code, Cursor | `/` (`\` on Windows) |
//! | `${input:ID}` | VS Code | an error naming the input: VS Code prompts the user, we cannot |
//! | `${command:…}`, `${config:…}`, … | VS Code | an error: only VS Code can resolve them |
//!
//! Anything else between `${` and `}` (`${1}`, `${a b}`) and a `${` without a `}` are kept as
//! written; a `$NAME` without braces is never expanded (no host does).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

/// What variables expand to while one file is loaded.
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub struct Vars<'a> {
    /// Our environment (the process environment, or a test's map).
    env: &'a dyn Fn(&str) -> Option<String>,
    /// The config file's directory, absolute; `None` for JSON that came from no file.
    base_dir: Option<&'a Path>,
    /// The project `${workspaceFolder}` names, when the file sits in its `.vscode` or `.cursor`.
    workspace: Option<PathBuf>,
    /// VS Code's `inputs`: description by id, for the error that names one.
    inputs: BTreeMap<String, String>,
}

impl<'a> Vars<'a> {
    /// The variables of one file: `env` for `${env:…}` and bare names, `base_dir` for relative
    /// paths and `${workspaceFolder}`, `inputs` for `${input:…}`.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn new(
        env: &'a dyn Fn(&str) -> Option<String>,
        base_dir: Option<&'a Path>,
        inputs: BTreeMap<String, String>,
    ) -> Self {
        let workspace = base_dir.and_then(|dir| workspace_of(dir, env));
        Self {
            env,
            base_dir,
            workspace,
            inputs,
        }
    }

    /// `path` made absolute against the config file's directory (or left relative, to the
    /// current directory, when there is no file).
    pub(super) fn resolve_path(&self, path: &str) -> PathBuf {
        match self.base_dir {
            Some(dir) if Path::new(path).is_relative() => dir.join(path),
            _ => PathBuf::from(path),
        }
    }

    /// `text` with every variable replaced, or why one cannot be.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn expand(&self, text: &str) -> Result<String, String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                rest = &rest[start..];
                break;
            };
            match self.variable(&after[..end])? {
                Some(value) => out.push_str(&value),
                None => out.push_str(&rest[start..start + end + 3]),
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The value of the variable written `${inner}`; `None` when `inner` is not a variable.
    fn variable(&self, inner: &str) -> Result<Option<String>, String> {
        if let Some((name, default)) = inner.split_once(":-")
            && is_identifier(name)
        {
            return Ok(Some((self.env)(name).unwrap_or_else(|| default.to_owned())));
        }
        if let Some((prefix, argument)) = inner.split_once(':') {
            return if is_identifier(prefix) {
                self.prefixed(inner, prefix, argument).map(Some)
            } else {
                Ok(None)
            };
        }
        let value = match inner {
            "workspaceFolder" => self.workspace(inner)?.display().to_string(),
            "workspaceFolderBasename" => self
                .workspace(inner)?
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            "userHome" => (self.env)("HOME")
                .or_else(|| (self.env)("USERPROFILE"))
                .ok_or("`${userHome}`: neither HOME nor USERPROFILE is set")?,
            "pathSeparator" | "/" => std::path::MAIN_SEPARATOR.to_string(),
            name if is_identifier(name) => (self.env)(name).ok_or_else(|| {
                format!(
                    "`${{{name}}}` is not set and has no default (`${{{name}:-default}}` gives one)"
                )
            })?,
            _ => return Ok(None),
        };
        Ok(Some(value))
    }

    fn prefixed(&self, inner: &str, prefix: &str, argument: &str) -> Result<String, String> {
        match prefix {
            "env" => Ok((self.env)(argument).unwrap_or_else(|| {
                tracing::warn!(variable = argument, "unset; `${{env:…}}` expands to \"\"");
                String::new()
            })),
            "file" => {
                let path = self.resolve_path(argument);
                let text = super::files::read_small(&path).map_err(|err| {
                    format!("`${{{inner}}}`: cannot read {}: {err}", path.display())
                })?;
                Ok(text.trim_end_matches(['\n', '\r']).to_owned())
            }
            "input" => Err(match self.inputs.get(argument) {
                Some(description) => format!(
                    "`${{{inner}}}` (\"{description}\") is asked of the user by VS Code, which \
                     mcp-resilient cannot do; write the value here or use `${{env:NAME}}`"
                ),
                None => format!(
                    "`${{{inner}}}` is asked of the user by VS Code, which mcp-resilient cannot \
                     do; write the value here or use `${{env:NAME}}`"
                ),
            }),
            _ => Err(format!(
                "`${{{inner}}}` can only be resolved by the host (VS Code's `{prefix}:` \
                 variables); write the value instead"
            )),
        }
    }

    fn workspace(&self, inner: &str) -> Result<&Path, String> {
        self.workspace.as_deref().ok_or_else(|| {
            format!(
                "`${{{inner}}}` names the open project, and this file is not in a project's \
                 `.vscode` or `.cursor` directory"
            )
        })
    }
}

/// The project whose settings directory `dir` is: the parent of a `.vscode` or `.cursor`
/// directory. Not for `~/.cursor`, Cursor's global settings: there the variable means whichever
/// project is open, and the home directory would be a wrong (and wide) answer.
fn workspace_of(dir: &Path, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let parent = dir.parent()?;
    match dir.file_name()?.to_str()? {
        ".vscode" => Some(parent.to_path_buf()),
        ".cursor" if env("HOME").map(PathBuf::from).as_deref() != Some(parent) => {
            Some(parent.to_path_buf())
        }
        _ => None,
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`: an environment variable name as hosts accept it.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
