//! Spawning a child that dies with us, even when we are SIGKILLed.
//!
//! The child keeps its own process group (for the orderly stop: the whole group is signalled
//! and swept), so the terminal's or a host's signal to our group does not reach it, and nothing
//! of ours runs when we are SIGKILLed. On Linux the kernel does it instead: the child asks for
//! `PR_SET_PDEATHSIG(SIGKILL)` between fork and exec. That setting survives `exec` (except into
//! a set-uid or set-gid program, where the kernel clears it).
//!
//! Two details decide whether it works:
//!
//! 1. The signal fires when the *thread* that forked the child ends, not the process. Tokio's
//!    workers live as long as their runtime, but blocking-pool threads come and go and a test's
//!    runtime thread ends with the test; so every child is forked from one thread of ours that
//!    lives as long as the process and does nothing else ([`spawn`] hands it the command).
//! 2. The parent may die between the fork and the `prctl`; then the signal would never come.
//!    The child checks that its parent is still the process that forked it, and fails the exec
//!    otherwise.
//!
//! Only the direct child is covered: a wrapper's own children (`npx` → `node`) are swept with the
//! group in an orderly stop, but after a SIGKILL they see only their stdin end.
//!
//! This is the crate's one `unsafe` block: `pre_exec` is unsafe because its closure runs in the
//! forked child, where only async-signal-safe calls are allowed. Why not the alternatives:
//! `process-wrap` (rmcp's choice) has no death-signal wrapper and would be a dependency for one
//! syscall; a re-exec trampoline (our own binary sets the signal, then execs the server) would
//! only work for the CLI, not for a host that links the library.

use std::{
    io,
    sync::{Mutex, PoisonError, mpsc},
};

use tokio::{
    process::{Child, Command},
    runtime::Handle,
    sync::oneshot,
};

/// A command to fork, the runtime that owns the child, and where the child goes.
struct Job {
    command: Command,
    runtime: Handle,
    reply: oneshot::Sender<io::Result<Child>>,
}

/// The spawner thread's queue; started on first use, never ended.
static SPAWNER: Mutex<Option<mpsc::Sender<Job>>> = Mutex::new(None);

/// Spawns `command` (made to die with this process) from the spawner thread.
pub(super) async fn spawn(mut command: Command) -> io::Result<Child> {
    die_with_parent(&mut command);
    let (reply, child) = oneshot::channel();
    let job = Job {
        command,
        runtime: Handle::current(),
        reply,
    };
    queue().and_then(|jobs| {
        jobs.send(job)
            .map_err(|_| io::Error::other("the spawner thread has stopped"))
    })?;
    child
        .await
        .map_err(|_| io::Error::other("the spawner thread dropped the request"))?
}

/// The spawner's queue, starting the thread if it is not running yet.
fn queue() -> io::Result<mpsc::Sender<Job>> {
    let mut spawner = SPAWNER.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(jobs) = spawner.as_ref() {
        return Ok(jobs.clone());
    }
    let (jobs, next) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("mcp-resilient-spawner".into())
        .spawn(move || {
            for job in next {
                // The child is registered with the caller's runtime (its reaping and
                // `kill_on_drop`), as if it had been spawned there.
                let _runtime = job.runtime.enter();
                let mut command = job.command;
                let _ = job.reply.send(command.spawn());
            }
        })?;
    *spawner = Some(jobs.clone());
    Ok(jobs)
}

/// Makes the child ask for SIGKILL when its parent thread ends (see the module docs).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command) {
    use nix::{errno::Errno, sys::signal::Signal, unistd};

    let parent = unistd::getpid();
    // SAFETY: the closure runs in the forked child before exec. It makes two system calls,
    // prctl(2) and getppid(2), both async-signal-safe; it allocates nothing, takes no lock and
    // touches no state but the copied pid (an `io::Error` made from an errno does not
    // allocate).
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            if unistd::getppid() != parent {
                return Err(Errno::ESRCH.into());
            }
            Ok(())
        });
    }
}

/// Other systems have no death signal; there the orderly stop is all there is.
#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut Command) {}
