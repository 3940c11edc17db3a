//! Object headers and the table of live handles.
//!
//! A handle given to the application is the address of a small handle cell whose first field is
//! the ICD dispatch-table pointer, as `cl_icd.h` requires (the loader reads it to dispatch).
//! The table of live handles maps that address to the object, so a pointer vkcl never issued, a
//! released handle or a handle of another kind is detected by a table lookup, never by reading
//! through the pointer. Cells of released objects are quarantined (kept, not reused) for the
//! next [`QUARANTINE`] releases, so that a loader dereferencing a just-released handle still
//! finds vkcl's dispatch table and vkcl answers `CL_INVALID_*`; only after that is the cell
//! freed (a handle released that long ago is undefined behaviour in OpenCL anyway).
//!
//! Reference counts: the OpenCL reference count (`clRetain*`/`clRelease*`) lives in the header;
//! while it is above zero the table holds one strong `Arc`. Objects that depend on another
//! (a queue on its context, a pending command on its buffers) hold their own `Arc`s, so an
//! object released by the application stays alive until nothing uses it.

use super::error::{ClError, ClResult};
use opencl_sys::cl_icd::cl_icd_dispatch;
use std::any::Any;
use std::collections::HashMap;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::sync::{Arc, LazyLock, OnceLock, RwLock};

/// Which OpenCL object type a handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Kind {
    Platform = 1,
    Device,
    Context,
    CommandQueue,
    Mem,
    Sampler,
    Program,
    Kernel,
    Event,
    CommandBuffer,
    MutableCommand,
    Semaphore,
}

/// The ICD dispatch table that starts every handle cell. It lists the C entry points, so the
/// C ABI layer (`api`) owns it and installs it here ([`install_dispatch_table`]) before it
/// makes the first object; core never names the entry points.
static DISPATCH: OnceLock<&'static cl_icd_dispatch> = OnceLock::new();

/// Installs the ICD dispatch table that every handle cell made from now on points to
/// (`cl_icd.h`: the loader reads it through the handle). The first table installed stays;
/// later calls change nothing. Must run before the first [`register`] (the `api` layer calls
/// it before it first asks for the platform, from which every other object descends).
pub fn install_dispatch_table(table: &'static cl_icd_dispatch) {
    let _ = DISPATCH.set(table);
}

/// Number of released handle cells kept before the oldest is freed.
pub const QUARANTINE: usize = 1 << 16;

/// What a handle points to: the dispatch table first (ICD rule), then the kind.
#[repr(C)]
struct HandleCell {
    dispatch: &'static cl_icd_dispatch,
    kind: Kind,
}

/// Part of every OpenCL object: its handle, kind and OpenCL reference count.
pub struct Header {
    handle: AtomicUsize,
    kind: Kind,
    refs: AtomicU32,
}

impl Header {
    /// A header with reference count 1 (the handle is assigned by [`register`]).
    pub fn new(kind: Kind) -> Self {
        Header {
            handle: AtomicUsize::new(0),
            kind,
            refs: AtomicU32::new(1),
        }
    }

    /// The object's handle (NULL if it was never handed to the application).
    pub fn handle(&self) -> *mut c_void {
        self.handle.load(Ordering::Acquire) as *mut c_void
    }

    /// The OpenCL reference count (`CL_*_REFERENCE_COUNT`).
    pub fn ref_count(&self) -> u32 {
        self.refs.load(Ordering::Acquire)
    }
}

/// Implemented by each OpenCL object type.
pub trait ClObject: Any + Send + Sync {
    /// The kind stored in the header.
    const KIND: Kind;
    /// The error for an invalid handle of this type (`CL_INVALID_CONTEXT` and so on).
    const INVALID: i32;
    /// The object's header.
    fn header(&self) -> &Header;
}

type Table = HashMap<usize, Arc<dyn Any + Send + Sync>>;
static LIVE: LazyLock<RwLock<Table>> = LazyLock::new(|| RwLock::new(HashMap::new()));

fn table_read() -> std::sync::RwLockReadGuard<'static, Table> {
    LIVE.read().unwrap_or_else(|e| e.into_inner())
}

fn table_write() -> std::sync::RwLockWriteGuard<'static, Table> {
    LIVE.write().unwrap_or_else(|e| e.into_inner())
}

static RELEASED: LazyLock<Mutex<VecDeque<usize>>> = LazyLock::new(|| Mutex::new(VecDeque::new()));

/// Makes `obj` a live object with reference count 1 and returns it; its handle is
/// [`handle_of`] the returned `Arc`.
pub fn register<T: ClObject>(obj: T) -> Arc<T> {
    register_arc(Arc::new(obj))
}

/// Makes an existing `Arc` a live object (its header's count is 1 from construction) with a
/// new handle. Registering an object twice keeps its first handle.
pub fn register_arc<T: ClObject>(arc: Arc<T>) -> Arc<T> {
    if arc.header().handle.load(Ordering::Acquire) != 0 {
        return arc;
    }
    debug_assert_eq!(
        arc.header().kind,
        T::KIND,
        "object registered with another type's header"
    );
    let cell = Box::into_raw(Box::new(HandleCell {
        dispatch: DISPATCH
            .get()
            .expect("the ICD dispatch table is installed before the first object is made"),
        kind: T::KIND,
    })) as usize;
    arc.header().handle.store(cell, Ordering::Release);
    table_write().insert(cell, arc.clone() as Arc<dyn Any + Send + Sync>);
    arc
}

/// The handle of a registered object, as an untyped pointer.
pub fn handle_of<T: ClObject>(obj: &Arc<T>) -> *mut c_void {
    obj.header().handle()
}

/// Retires the handle cell of a released object (see [`QUARANTINE`]).
fn retire(cell: usize) {
    let mut q = RELEASED.lock().unwrap_or_else(|e| e.into_inner());
    q.push_back(cell);
    if q.len() > QUARANTINE {
        if let Some(old) = q.pop_front() {
            // SAFETY: `old` came from Box::into_raw in register_arc and is no longer in the
            // table, so nothing vkcl does reaches it again.
            drop(unsafe { Box::from_raw(old as *mut HandleCell) });
        }
    }
}

/// Handles released to reference count 0 whose objects other objects still use (see
/// [`release_held`]): valid while the object lives.
static HELD: LazyLock<Mutex<HashMap<usize, std::sync::Weak<dyn Any + Send + Sync>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The object of a held handle while it lives; a handle whose object is gone leaves the held
/// set and is retired.
fn held(ptr: usize) -> Option<Arc<dyn Any + Send + Sync>> {
    let mut h = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let weak = h.get(&ptr)?;
    match weak.upgrade() {
        Some(a) => Some(a),
        None => {
            h.remove(&ptr);
            drop(h);
            retire(ptr);
            None
        }
    }
}

/// Looks a handle up. Errors: `T::INVALID` if the pointer is NULL, was never issued by vkcl,
/// was released to reference count 0 (and, for a handle released by [`release_held`], its
/// object is gone), or names an object of another type.
pub fn lookup<T: ClObject>(ptr: *const c_void) -> ClResult<Arc<T>> {
    if ptr.is_null() {
        return Err(ClError(T::INVALID));
    }
    let found = table_read().get(&(ptr as usize)).cloned();
    let any = found
        .or_else(|| held(ptr as usize))
        .ok_or(ClError(T::INVALID))?;
    any.downcast::<T>().map_err(|_| ClError(T::INVALID))
}

/// `clRelease*` for objects that other objects reference by handle (sub-devices: a context's
/// `CL_CONTEXT_DEVICES`, a queue's `CL_QUEUE_DEVICE`, a child's `CL_DEVICE_PARENT_DEVICE`):
/// as [`release`], but at count 0 the handle stays valid while anything still holds the
/// object (OpenCL 3.0 section 4.3, clReleaseDevice: the sub-device is deleted once its count
/// is zero and no other object references it). A retain through such a handle makes it live
/// again. Errors as [`lookup`].
pub fn release_held<T: ClObject>(ptr: *const c_void) -> ClResult<()> {
    let mut table = table_write();
    let Some(any) = table.get(&(ptr as usize)).cloned() else {
        drop(table);
        // Already at count 0 but still held: one release too many.
        return Err(ClError(T::INVALID));
    };
    let obj = any
        .clone()
        .downcast::<T>()
        .map_err(|_| ClError(T::INVALID))?;
    let prev = obj.header().refs.fetch_sub(1, Ordering::AcqRel);
    if prev == 1 {
        table.remove(&(ptr as usize));
        drop(table);
        HELD.lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(ptr as usize, Arc::downgrade(&any));
    }
    Ok(())
}

/// Whether `ptr` is a live handle of type `T`.
pub fn is_live<T: ClObject>(ptr: *const c_void) -> bool {
    lookup::<T>(ptr).is_ok()
}

/// `clRetain*`: increments the OpenCL reference count. Errors as [`lookup`].
pub fn retain<T: ClObject>(ptr: *const c_void) -> ClResult<()> {
    let obj = lookup::<T>(ptr)?;
    let mut table = table_write();
    if obj.header().refs.fetch_add(1, Ordering::AcqRel) == 0 {
        // A held handle (see [`release_held`]) becomes live again.
        HELD.lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(ptr as usize));
        table.insert(ptr as usize, obj as Arc<dyn Any + Send + Sync>);
    }
    Ok(())
}

/// `clRelease*`: decrements the OpenCL reference count; at zero the handle stops being valid
/// and the table's `Arc` is dropped (the object itself lives on while others hold it).
/// Returns the object when this call released the last reference. Errors as [`lookup`].
pub fn release<T: ClObject>(ptr: *const c_void) -> ClResult<Option<Arc<T>>> {
    let mut table = table_write();
    let any = table
        .get(&(ptr as usize))
        .cloned()
        .ok_or(ClError(T::INVALID))?;
    let obj = any.downcast::<T>().map_err(|_| ClError(T::INVALID))?;
    let prev = obj.header().refs.fetch_sub(1, Ordering::AcqRel);
    if prev == 1 {
        table.remove(&(ptr as usize));
        drop(table);
        retire(ptr as usize);
        return Ok(Some(obj));
    }
    Ok(None)
}

/// Looks up every handle of a list (`num` entries at `list`). Errors: `T::INVALID` for any
/// invalid entry.
///
/// # Safety
/// `list` must point to `num` readable handles, or be NULL when `num` is 0.
pub unsafe fn lookup_list<T: ClObject>(
    list: *const *mut c_void,
    num: usize,
) -> ClResult<Vec<Arc<T>>> {
    if num == 0 || list.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: the caller guarantees `list` holds `num` pointers.
    let ptrs = unsafe { std::slice::from_raw_parts(list, num) };
    ptrs.iter().map(|&p| lookup::<T>(p)).collect()
}
