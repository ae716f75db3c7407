//! A config file: `json \0 env-file`. The JSON is loaded as a servers file sitting in a
//! `.vscode` directory that holds `fuzz.env` and `secret.txt` (both the text after the NUL),
//! so `envFile`, `${file:…}` and `${workspaceFolder}` reach real files; the JSON is also
//! expanded as one value, and the env file read by the dotenv reader alone.
#![no_main]

use std::{path::PathBuf, sync::OnceLock};

use libfuzzer_sys::fuzz_target;

/// A scratch `.vscode` directory of this process, made once.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir()
            .join(format!("mcp-resilient-fuzz-{}", std::process::id()))
            .join(".vscode");
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (json, env_file) = text.split_once('\0').unwrap_or((&text, ""));
    let dir = dir();
    std::fs::write(dir.join("fuzz.env"), env_file).expect("write fuzz.env");
    std::fs::write(dir.join("secret.txt"), env_file).expect("write secret.txt");
    fuzz_checks::config_text(json, dir);
    fuzz_checks::expansion(json, dir);
    fuzz_checks::dotenv(env_file);
});
