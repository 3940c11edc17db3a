//! Debug counters of the Vulkan work vkcl does (read by tests through `vkcl_debug_stats`).

use std::sync::atomic::{AtomicU64, Ordering};

/// Number of `vkQueueSubmit` calls made by vkcl since the library was loaded.
static QUEUE_SUBMITS: AtomicU64 = AtomicU64::new(0);
/// Number of device commands (copies, fills, dispatches) recorded into any Vulkan command
/// buffer since the library was loaded; replaying a secondary records none.
static COMMANDS_RECORDED: AtomicU64 = AtomicU64::new(0);
/// Number of secondary command buffers executed (`vkCmdExecuteCommands` calls).
static SECONDARIES_EXECUTED: AtomicU64 = AtomicU64::new(0);
/// Number of pipeline barriers recorded into secondaries (by command-buffer finalize).
static SECONDARY_BARRIERS: AtomicU64 = AtomicU64::new(0);

/// Number of staging buffers allocated from Vulkan (not taken from the pool) since the library
/// was loaded (`backend/vulkan/staging.rs`).
static STAGING_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Number of copies made by vkcl's copy shaders (buffers: `copy_kernel.rs`, images:
/// `image_copy_kernel.rs`) rather than `vkCmdCopyBuffer` / `vkCmdCopyImage`, one per region,
/// since the library was loaded.
static SHADER_COPIES: AtomicU64 = AtomicU64::new(0);

/// Counts one region copied by a copy shader.
pub fn count_shader_copy() {
    SHADER_COPIES.fetch_add(1, Ordering::Relaxed);
}

/// Counts one staging buffer allocated from Vulkan.
pub fn count_staging_allocation() {
    STAGING_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
}

/// Counts one `vkQueueSubmit`.
pub fn count_submit() {
    QUEUE_SUBMITS.fetch_add(1, Ordering::Relaxed);
}

/// Counts one recorded device command.
pub fn count_command() {
    COMMANDS_RECORDED.fetch_add(1, Ordering::Relaxed);
}

/// Counts one executed secondary command buffer.
pub fn count_secondary_executed() {
    SECONDARIES_EXECUTED.fetch_add(1, Ordering::Relaxed);
}

/// Counts `n` pipeline barriers recorded into a secondary.
pub fn count_secondary_barriers(n: u64) {
    SECONDARY_BARRIERS.fetch_add(n, Ordering::Relaxed);
}

/// The counters since the library was loaded: `vkQueueSubmit` calls, device commands
/// recorded, secondaries executed, barriers recorded into secondaries, staging buffers
/// allocated from Vulkan, regions copied by the copy shaders.
pub fn snapshot() -> [u64; 6] {
    [
        QUEUE_SUBMITS.load(Ordering::Relaxed),
        COMMANDS_RECORDED.load(Ordering::Relaxed),
        SECONDARIES_EXECUTED.load(Ordering::Relaxed),
        SECONDARY_BARRIERS.load(Ordering::Relaxed),
        STAGING_ALLOCATIONS.load(Ordering::Relaxed),
        SHADER_COPIES.load(Ordering::Relaxed),
    ]
}
