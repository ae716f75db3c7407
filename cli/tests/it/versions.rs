//! One version for every artefact: the workspace's (`[workspace.package] version`), which this
//! package takes. The crates, the npm packages (the launcher's own version and the platform
//! packages it names), the wheel's metadata and the binary's `--version` must all say it, so a
//! release cannot ship an npm launcher that asks for binaries of another version.

use std::{path::Path, process::Command};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn read(relative: &str) -> String {
    let path = repository().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The value of `key = "…"` in TOML `table` (the line form this repository writes).
fn toml_string(text: &str, table: &str, key: &str) -> Option<String> {
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{table}]");
        } else if inside {
            let value = line.strip_prefix(key).map(str::trim_start);
            if let Some(rest) = value.and_then(|v| v.strip_prefix('=')) {
                return Some(rest.trim().trim_matches('"').to_owned());
            }
        }
    }
    None
}

#[test]
fn the_workspace_version_is_every_crates() {
    let workspace = read("Cargo.toml");
    assert_eq!(
        toml_string(&workspace, "workspace.package", "version").as_deref(),
        Some(VERSION),
        "this package's version is the workspace's"
    );
    for manifest in [
        "Cargo.toml",
        "gateway/Cargo.toml",
        "cli/Cargo.toml",
        "mock-server/Cargo.toml",
        "conformance/Cargo.toml",
    ] {
        let text = read(manifest);
        assert_eq!(
            toml_string(&text, "package", "version.workspace").as_deref(),
            Some("true"),
            "{manifest} takes the workspace's version"
        );
        // A published crate names its siblings with a version, which must be this one.
        for line in text.lines().filter(|l| l.contains("path = ")) {
            if let Some((_, rest)) = line.split_once("version = \"") {
                let required = rest.split('"').next().unwrap();
                assert_eq!(required, VERSION, "{manifest}: {line}");
            }
        }
    }
}

#[test]
fn the_npm_packages_are_the_workspace_version() {
    let launcher: serde_json::Value =
        serde_json::from_str(&read("npm/mcp-resilient/package.json")).unwrap();
    assert_eq!(launcher["name"], "mcp-resilient");
    assert_eq!(
        launcher["version"], VERSION,
        "npm/mcp-resilient/package.json"
    );
    let platforms = launcher["optionalDependencies"].as_object().unwrap();
    let names: Vec<_> = platforms.keys().map(String::as_str).collect();
    for expected in [
        "@mcp-resilient/linux-x64",
        "@mcp-resilient/linux-arm64",
        "@mcp-resilient/darwin-x64",
        "@mcp-resilient/darwin-arm64",
        "@mcp-resilient/win32-x64",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    for (name, required) in platforms {
        assert_eq!(required, VERSION, "the launcher asks for {name} {required}");
    }
    // The launcher knows the same platforms the package names.
    let script = read("npm/mcp-resilient/bin/mcp-resilient.js");
    for name in names {
        assert!(
            script.contains(&format!("\"{name}\"")),
            "{name} not in the launcher"
        );
    }
}

#[test]
fn the_wheel_is_the_workspace_version() {
    let project = read("python/pyproject.toml");
    assert_eq!(
        toml_string(&project, "project", "name").as_deref(),
        Some("mcp-resilient-cli")
    );
    assert_eq!(
        toml_string(&project, "project", "version").as_deref(),
        Some(VERSION)
    );
}

#[test]
fn the_binary_says_the_workspace_version() {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-resilient"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        format!("mcp-resilient {VERSION}")
    );
}
