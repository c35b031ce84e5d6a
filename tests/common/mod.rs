//! Shared test harness: golden-vector loading, a deterministic RNG, canary buffers and the
//! differential runner that checks every tier available on the running CPU against the scalar
//! reference.
#![allow(dead_code)]

#[macro_use]
pub mod suite;
#[macro_use]
pub mod f16_lhs;
pub mod guard;
pub mod rhs;

use std::path::{Path, PathBuf};

use qgemm::rhs::Layout;
use qgemm::{CpuFeatures, Element, Family, Kernel, MatmulArgs, Packing, Tier};

/// The run arguments of family `F` (its parameters included).
pub type Args<F> = MatmulArgs<<F as Family>::Params>;
use serde_json::Value;

/// The CPU the tests run on, as the library detects it.
pub fn cpu() -> CpuFeatures {
    CpuFeatures::detect()
}

/// `tests/data`.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("data")
}

/// One golden case (a manifest of `tests/data/cases`).
pub struct Case {
    pub id: String,
    pub json: Value,
}

impl Case {
    pub fn m(&self) -> usize {
        self.json["m"].as_u64().unwrap() as usize
    }
    pub fn n(&self) -> usize {
        self.json["n"].as_u64().unwrap() as usize
    }
    pub fn k(&self) -> usize {
        self.json["k"].as_u64().unwrap() as usize
    }
    pub fn bl(&self) -> usize {
        self.json["bl"].as_u64().unwrap_or(0) as usize
    }
    /// Bytes of a file a manifest names (`bin/...`).
    pub fn bytes(&self, file: &Value) -> Vec<u8> {
        let rel = file.as_str().expect("file name");
        std::fs::read(data_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }
    pub fn f32s(&self, file: &Value) -> Vec<f32> {
        to_f32(&self.bytes(file))
    }
    /// A file of little-endian elements of type `T`.
    pub fn values<T: Element>(&self, file: &Value) -> Vec<T> {
        from_bytes(&self.bytes(file))
    }
    pub fn packings(&self) -> &Vec<Value> {
        self.json["packings"].as_array().unwrap()
    }
    /// The raw RHS weights of the case and their row stride in bytes.
    pub fn rhs_raw(&self) -> (Vec<u8>, usize) {
        let rhs = &self.json["inputs"]["rhs"];
        (self.bytes(&rhs["file"]), rhs["row_stride_bytes"].as_u64().unwrap() as usize)
    }
    /// Whether the raw int4 RHS is stored `n x k` or `k x n`.
    pub fn rhs_layout(&self) -> Layout {
        let nxk = self.json["inputs"]["rhs"]["layout"].as_str().unwrap().starts_with("nxk");
        if nxk { Layout::NxK } else { Layout::KxN }
    }
    /// The case's f32 bias, if it has one.
    pub fn bias(&self) -> Option<Vec<f32>> {
        let bias = &self.json["inputs"]["bias"];
        if bias.is_null() { None } else { Some(self.f32s(&bias["file"])) }
    }
    /// `(min, max)` of the clamp named `none` or `tight`, from the recorded bits.
    pub fn clamp(&self, which: &str) -> (f32, f32) {
        let c = &self.json["clamp"][which];
        (bits(&c["min"]["bits"]), bits(&c["max"]["bits"]))
    }
}

fn bits(v: &Value) -> f32 {
    let s = v.as_str().unwrap().trim_start_matches("0x");
    f32::from_bits(u32::from_str_radix(s, 16).unwrap())
}

pub fn to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Little-endian elements of type `T`.
pub fn from_bytes<T: Element>(b: &[u8]) -> Vec<T> {
    b.chunks_exact(T::SIZE)
        .map(|c| T::from_bits32(c.iter().rev().fold(0u32, |a, &x| (a << 8) | u32::from(x))))
        .collect()
}

/// `x` rounded to `T` (the activations the f16/bf16 families take).
pub fn convert<T: Element>(x: &[f32]) -> Vec<T> {
    x.iter().map(|&v| T::from_f32(v)).collect()
}

/// Whether the golden vectors are present. They are part of the repository but not of the
/// published crate (`exclude = ["tests/data/*"]` keeps it small): there, the golden tests say
/// they are skipped and why, and pass. In the repository (`.git` beside `tests`) a missing data
/// directory is an error, so the golden tests can never be skipped silently in CI.
pub fn golden_available(test: &str) -> bool {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if data_dir().join("cases").is_dir() {
        return true;
    }
    assert!(!root.join(".git").exists(), "{test}: tests/data/cases is missing from the repository checkout");
    println!("{test}: skipped: the golden vectors (tests/data) are not shipped in the published crate");
    false
}

/// Every case whose id starts with `family + "__"`, sorted by id.
pub fn cases(family: &str) -> Vec<Case> {
    let dir = data_dir().join("cases");
    let mut out: Vec<Case> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let p = e.ok()?.path();
            let id = p.file_stem()?.to_str()?.to_string();
            id.starts_with(&format!("{family}__")).then(|| {
                let json = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
                Case { id, json }
            })
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    assert!(!out.is_empty(), "no golden cases for {family}");
    out
}

#[path = "../../examples/support/splitmix.rs"]
mod splitmix;
pub use splitmix::SplitMix64 as Rng;

/// Random bytes from the test generator.
pub trait RngBytes {
    fn bytes(&mut self, len: usize) -> Vec<u8>;
}

impl RngBytes for Rng {
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
}

/// Values compared by bit pattern (so NaN canaries work).
pub trait Bits: Copy {
    fn same(&self, other: &Self) -> bool;
}
impl Bits for u8 {
    fn same(&self, other: &Self) -> bool {
        self == other
    }
}
impl Bits for f32 {
    fn same(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits()
    }
}
impl Bits for qgemm::half::f16 {
    fn same(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits()
    }
}
impl Bits for qgemm::half::bf16 {
    fn same(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits()
    }
}

/// A buffer with canary regions before and after the part a call may use.
pub struct Canary<T: Bits> {
    buf: Vec<T>,
    pad: usize,
    len: usize,
    fill: T,
}

pub const CANARY_PAD: usize = 64;

impl<T: Bits> Canary<T> {
    pub fn new(len: usize, fill: T) -> Self {
        Canary { buf: vec![fill; len + 2 * CANARY_PAD], pad: CANARY_PAD, len, fill }
    }
    pub fn inner(&mut self) -> &mut [T] {
        &mut self.buf[self.pad..self.pad + self.len]
    }
    pub fn get(&self) -> &[T] {
        &self.buf[self.pad..self.pad + self.len]
    }
    /// Panics if anything outside the inner part changed.
    pub fn check(&self, what: &str) {
        let (pre, rest) = self.buf.split_at(self.pad);
        let post = &rest[self.len..];
        assert!(pre.iter().all(|v| v.same(&self.fill)), "{what}: write before the buffer");
        assert!(post.iter().all(|v| v.same(&self.fill)), "{what}: write after the buffer");
    }
}

/// A NaN pattern no kernel produces: a signalling NaN payload, to detect untouched elements.
pub const DST_CANARY: f32 = f32::from_bits(0x7fa5_a5a5);

/// The signalling-NaN canary of an output type (kernels only ever store quiet NaNs).
pub fn canary<T: Element>() -> T {
    T::from_bits32(match T::NAME {
        "f32" => DST_CANARY.to_bits(),
        "f16" => 0x7ca5,
        _ => 0x7fa5,
    })
}

/// Element-wise bit comparison with a readable failure.
pub fn assert_bits_eq<T: Element>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i].to_bits32() != want[i].to_bits32()).collect();
    if let Some(&i) = bad.first() {
        panic!(
            "{what}: {} of {} {} elements differ; first at {i}: got {} ({:#010x}), want {} ({:#010x})",
            bad.len(),
            got.len(),
            T::NAME,
            got[i].to_f32(),
            got[i].to_bits32(),
            want[i].to_f32(),
            want[i].to_bits32()
        );
    }
}

/// Runs `kernel` over the whole `m x n` output into a canary-guarded buffer with a padded row
/// stride, checks that nothing outside the rectangle changed, and returns the dense result.
pub fn run_guarded<F: Family>(
    kernel: &Kernel<F>,
    lhs_packed: &[F::Lhs],
    rhs_packed: &[u8],
    args: &Args<F>,
) -> Vec<F::Dst>
where
    F::Dst: Bits,
    F::Lhs: Canaried,
{
    let (m, n) = (args.m, args.n);
    let stride = n + 3;
    let fill = canary::<F::Dst>();
    let mut dst = Canary::new((m - 1) * stride + n, fill);
    // The packed operands sit between canaries too: a kernel must not write them (and a read
    // past them would see the canary bytes, which would change the result).
    let mut lhs = Canary::new(lhs_packed.len(), F::Lhs::canary_fill());
    lhs.inner().copy_from_slice(lhs_packed);
    let mut rhs = Canary::new(rhs_packed.len(), 0x5au8);
    rhs.inner().copy_from_slice(rhs_packed);
    let a = args.with_dst_stride(stride);
    kernel.run(lhs.get(), rhs.get(), dst.inner(), &a).unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
    dst.check(kernel.name());
    lhs.check(kernel.name());
    rhs.check(kernel.name());
    let same = lhs.get().iter().zip(lhs_packed).all(|(a, b)| a.same(b));
    assert!(same && rhs.get() == rhs_packed, "{}: wrote a packed operand", kernel.name());
    let full = dst.get();
    let mut out = Vec::with_capacity(m * n);
    for r in 0..m {
        let row = &full[r * stride..r * stride + n];
        out.extend_from_slice(row);
        if r + 1 < m {
            let gap = &full[r * stride + n..(r + 1) * stride];
            assert!(gap.iter().all(|v| v.same(&fill)), "{}: wrote row padding", kernel.name());
        }
    }
    assert!(out.iter().all(|v| !v.same(&fill)), "{}: element not written", kernel.name());
    out
}

/// Runs `kernel` as a grid of sub-rectangles (row cut after `m_cut` steps, column cut after
/// `n_cut` steps, both rounded to the kernel's steps) through the offset functions, the way
/// a threaded caller splits work; returns the dense result.
pub fn run_split<F: Family>(
    kernel: &Kernel<F>,
    lhs_packed: &[F::Lhs],
    rhs_packed: &[u8],
    args: &Args<F>,
    m_cut: usize,
    n_cut: usize,
) -> Vec<F::Dst>
where
    F::Dst: Bits,
{
    let (m, n) = (args.m, args.n);
    let m_cut = (m_cut.div_ceil(kernel.m_step()) * kernel.m_step()).min(m);
    let n_cut = (n_cut.div_ceil(kernel.n_step()) * kernel.n_step()).min(n);
    let mut dst = Canary::new(m * n, canary::<F::Dst>());
    for (m_idx, mm) in [(0, m_cut), (m_cut, m - m_cut)] {
        for (n_idx, nn) in [(0, n_cut), (n_cut, n - n_cut)] {
            if mm == 0 || nn == 0 {
                continue;
            }
            let off = kernel.dst_offset(m_idx, n_idx, n).unwrap();
            let a = args.with_rect(m_idx, n_idx, mm, nn).with_dst_stride(n);
            kernel.run(lhs_packed, rhs_packed, &mut dst.inner()[off..], &a).unwrap();
        }
    }
    dst.check(kernel.name());
    dst.get().to_vec()
}

/// What the differential runner reports.
#[derive(Default)]
pub struct TierReport {
    pub ran: Vec<&'static str>,
    /// Kernels the CPU cannot run: name, tier, and why (the feature it lacks).
    pub skipped: Vec<(&'static str, Tier, String)>,
}

impl TierReport {
    /// Records a kernel the CPU cannot run (once), with the error its resolution gave.
    pub fn skip(&mut self, name: &'static str, tier: Tier, why: qgemm::Error) {
        if !self.skipped.iter().any(|(n, _, _)| *n == name) {
            self.skipped.push((name, tier, why.to_string()));
        }
    }

    /// Records a kernel that ran (once).
    pub fn ran(&mut self, name: &'static str) {
        if !self.ran.contains(&name) {
            self.ran.push(name);
        }
    }

    /// Prints what ran and what was skipped, then fails if a tier that `QGEMM_REQUIRE_TIERS`
    /// names was skipped ([`required_tiers`]).
    pub fn print(&self, what: &str) {
        println!("{what}: ran {} kernels", self.ran.len());
        for (name, _, why) in &self.skipped {
            println!("  skipped {name}: {why}");
        }
        let required = required_tiers();
        let missed: Vec<_> = self.skipped.iter().filter(|(_, t, _)| required.contains(t)).collect();
        assert!(
            missed.is_empty(),
            "{what}: QGEMM_REQUIRE_TIERS requires {:?}, but these kernels were skipped: {missed:?}",
            required.iter().map(|t| t.name()).collect::<Vec<_>>()
        );
    }
}

/// The tiers the environment variable `QGEMM_REQUIRE_TIERS` says the CPU under test has: a
/// kernel of such a tier that the harness skips fails the test instead of being reported only.
/// `detected` (what each QEMU CI task sets) means every tier of [`Tier::ALL`] that the detected
/// CPU can run, so a new tier is required wherever the CPU has it without any list to update
/// (tests/cpu_features.rs checks detection itself against each QEMU model and the raw HWCAPs).
/// Otherwise a comma-separated list of tier names (e.g. `neon,dotprod,i8mm`); unknown names
/// fail, so a typo cannot disable the check.
pub fn required_tiers() -> Vec<Tier> {
    let Ok(list) = std::env::var("QGEMM_REQUIRE_TIERS") else {
        return Vec::new();
    };
    if list.trim() == "detected" {
        let cpu = qgemm::CpuFeatures::detect();
        return Tier::ALL.into_iter().filter(|t| t.is_available(&cpu)).collect();
    }
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|name| Tier::from_name(name).unwrap_or_else(|| panic!("QGEMM_REQUIRE_TIERS: unknown tier {name:?}")))
        .collect()
}

/// The differential harness: for every kernel of family `F` that consumes `packing`, runs it
/// (when the CPU has its tier) on the same packed operands as the scalar kernel of that
/// packing and requires identical bits, in one call and split into sub-rectangles.
pub fn check_tiers_against_scalar<F: Family>(
    packing: &Packing,
    lhs_packed: &[F::Lhs],
    rhs_packed: &[u8],
    args: &Args<F>,
    report: &mut TierReport,
) where
    F::Dst: Bits,
    F::Lhs: Canaried,
{
    let want = run_guarded(&scalar_of::<F>(packing), lhs_packed, rhs_packed, args);
    for k in kernels_of::<F>(packing, report).into_iter().filter(|k| k.tier() != Tier::Scalar) {
        let what = format!("{} m={} n={} k={}", k.name(), args.m, args.n, args.k);
        assert_bits_eq(&run_guarded(&k, lhs_packed, rhs_packed, args), &want, &what);
        let (mc, nc) = (args.m / 2, args.n / 2);
        assert_bits_eq(&run_split(&k, lhs_packed, rhs_packed, args, mc, nc), &want, &format!("{what} split"));
        report.ran(k.name());
    }
}

/// Every feature and a 512-bit streaming vector length: for resolving descriptors to query their
/// sizes and offsets (which do not depend on the CPU), never to run them.
pub fn any_cpu() -> CpuFeatures {
    let all = qgemm::Feature::ALL.iter().fold(CpuFeatures::NONE, |c, &f| {
        // SAFETY: kernels resolved with this set are only asked for sizes and offsets, never
        // run (every caller's contract).
        unsafe { c.with(f) }
    });
    // SAFETY: as above.
    unsafe { all.with_svl(64) }.unwrap()
}

/// A descriptor resolved for [`any_cpu`]: for its steps, packing and size queries, never to run.
pub fn info<F: Family>(d: &'static qgemm::Descriptor<F>) -> Kernel<F> {
    d.resolve(&any_cpu()).unwrap()
}

/// The packing of a descriptor of fixed shape (every catalogue kernel's, resolved on no CPU).
pub fn packing_of_desc<F: Family>(d: &qgemm::Descriptor<F>) -> Packing {
    d.packing_on(&CpuFeatures::NONE).unwrap_or_else(|| panic!("{}: not a fixed shape", d.name()))
}

/// The scalar kernel of family `F` with `packing`.
pub fn scalar_of<F: Family>(packing: &Packing) -> Kernel<F> {
    F::kernels()
        .iter()
        .find(|d| d.tier() == Tier::Scalar && d.packing_on(&CpuFeatures::NONE) == Some(*packing))
        .unwrap_or_else(|| panic!("no scalar kernel for {packing:?}"))
        .resolve(&CpuFeatures::NONE)
        .unwrap()
}

/// The kernels of family `F` with `packing` that this CPU runs (resolved); the others are
/// recorded as skipped in `report`.
pub fn kernels_of<F: Family>(packing: &Packing, report: &mut TierReport) -> Vec<Kernel<F>> {
    let cpu = cpu();
    let mut out = Vec::new();
    for d in F::kernels().iter().filter(|d| d.packing_on(&CpuFeatures::NONE) == Some(*packing)) {
        match d.resolve(&cpu) {
            Ok(k) => out.push(k),
            Err(e) => report.skip(d.name(), d.tier(), e),
        }
    }
    out
}

/// Canary fill values of the LHS element types.
pub trait Canaried: Bits {
    fn canary_fill() -> Self;
}

impl Canaried for u8 {
    fn canary_fill() -> u8 {
        0xa5
    }
}

impl Canaried for f32 {
    fn canary_fill() -> f32 {
        f32::from_bits(0x7fa5_a5a5)
    }
}

impl Canaried for half::f16 {
    fn canary_fill() -> half::f16 {
        half::f16::from_bits(0x7da5)
    }
}
