//! The catalogue machinery: the macros that assemble each family's kernel list from its tiers,
//! and kernel selection.

use crate::cpu::CpuFeatures;
use crate::matmul::{Descriptor, Family, Kernel};
use crate::packing::{LhsPacking, RhsPacking};

/// The items every SIMD tier module has: `KERNELS` (the listed kernels on aarch64, none
/// elsewhere) and the re-export of its `aarch64` module. A tier's availability is
/// [`Tier::is_available`]; its kernels are reached through the family's catalogue.
macro_rules! tier_module {
    ($tier:ident, $($kernel:ident),+ $(,)?) => {
        /// The kernels (public so that a firmware which knows its core can name the ones it
        /// runs, e.g. for [`Linear::run_with`](crate::op::Linear::run_with), and link nothing
        /// else) and their `unsafe` entry points (crate-private).
        #[cfg(target_arch = "aarch64")]
        pub use aarch64::*;

        /// This tier's kernels, best first: a list for
        /// [`Linear::run_with`](crate::op::Linear::run_with) that keeps only this tier's code.
        #[cfg(target_arch = "aarch64")]
        pub const KERNELS: &[&Descriptor] = &[$(&$kernel),+];

        /// This tier's kernels: none on this architecture.
        #[cfg(not(target_arch = "aarch64"))]
        pub const KERNELS: &[&Descriptor] = &[];
    };
}

/// [`tier_module!`] over a packing subset: `all` lists both kernel groups, `kr16` (the packings
/// with `kr / sr = 8`, all the bf16 packer serves) only the first.
macro_rules! subset_tier_module {
    ($tier:ident, all, [$($a:ident),+], [$($b:ident),+]) => {
        tier_module!($tier, $($a,)+ $($b),+);
    };
    ($tier:ident, kr16, [$($a:ident),+], $b:tt) => {
        tier_module!($tier, $($a),+);
    };
}

/// The items `$t` for the packing subset `all`; nothing for `kr16`.
#[cfg_attr(not(target_arch = "aarch64"), allow(unused_macros))]
macro_rules! if_all_packings {
    (all, $($t:tt)*) => {
        $($t)*
    };
    (kr16, $($t:tt)*) => {};
}

/// The kernels of an `asm!` tier module (dotprod, i8mm), as a table: per packing
/// `PACKING, "name prefix", [STATIC entry (m_step, n_step) => driver(extra, ..), ..];`, named
/// `matmul_clamp_<dst>_<prefix><m_step>x<n_step><suffix>` with the header's output type name
/// (`dst: "f32"`); `also: Bf16` in the header: every kernel of the table also needs that
/// feature. Each row
/// defines the `unsafe` entry point, which calls `driver(args, strides, &fam::PACKING, extra,
/// ..)`, and its catalogue descriptor. The invoking
/// module names its family module `fam` and imports `Kernel`, `RawKernel`, `Tier` and
/// `UncheckedArgs`.
#[cfg_attr(not(target_arch = "aarch64"), allow(unused_macros))]
macro_rules! asm_catalogue {
    (
        tier: $tier:ident, feature: $feature:literal, dst: $dst:literal, suffix: $suffix:literal
        $(, also: $extra:ident)?;
        $($rows:tt)+
    ) => {
        asm_catalogue!(@rows $tier, $feature, $dst, $suffix, [$($extra)?]; $($rows)+);
    };
    (@needs $kernel:expr, []) => {
        $kernel
    };
    (@needs $kernel:expr, [$extra:ident]) => {
        $kernel.needing($crate::Feature::$extra)
    };
    (
        @rows $tier:ident, $feature:literal, $dst:literal, $suffix:literal, $also:tt;
        $($packing:ident, $prefix:literal, [
            $($(#[$doc:meta])* $stat:ident $func:ident ($ms:literal, $ns:literal)
              => $driver:ident($($arg:expr),* $(,)?)),+ $(,)?
        ];)+
    ) => {
        $($(
            $(#[$doc])*
            #[doc = concat!("`", $ms, "x", $ns, "` kernel on `", stringify!($packing), "`.")]
            ///
            /// # Safety
            ///
            /// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for
            #[doc = concat!(
                "[`", stringify!($stat), "`]: the CPU has ", $feature, "; `m, n, k >= 1` (and `bl` ",
                "legal for `k` in the per-block families); the packed buffers hold `ceil(m/mr)` LHS ",
                "and `ceil(n/nr)` RHS tiles of this packing and `k`, whose tile strides `strides` ",
                "are; `dst` is writable for the `m x n` output and does not overlap them."
            )]
            pub(crate) unsafe fn $func(
                _packing: &$crate::Packing,
                args: &UncheckedArgs<fam::Dst, fam::Params>,
                strides: &$crate::matmul::TileStrides,
            ) {
                // SAFETY: forwarded from the caller's contract (with the call's tile strides),
                // with the kernel's own packing (the resolved packing of a fixed shape).
                unsafe { $driver(args, strides, &fam::$packing, $($arg),*) }
            }

            #[doc = concat!("`matmul_clamp_", $dst, "_", $prefix, $ms, "x", $ns, $suffix, "`.")]
            pub static $stat: Descriptor = asm_catalogue!(@needs fam::kernel(
                concat!("matmul_clamp_", $dst, "_", $prefix, $ms, "x", $ns, $suffix),
                Tier::$tier,
                ($ms, $ns),
                fam::$packing,
                $func,
            ), $also);
        )+)+
    };
}

/// [`family_catalogue!`] over a packing subset (see [`subset_tier_module!`]): the scalar kernels
/// of both lists for `all`, of the first for `kr16`.
macro_rules! subset_family_catalogue {
    ($fam:ident, $dst_name:literal, $formats:tt, all, [$($a:tt),+], [$($b:tt),+], fallback: $fallback:ident) => {
        family_catalogue!($fam, dst: $dst_name, formats: $formats, scalar: [$($a,)+ $($b),+], fallback: $fallback);
    };
    ($fam:ident, $dst_name:literal, $formats:tt, kr16, [$($a:tt),+], $b:tt, fallback: $fallback:ident) => {
        family_catalogue!($fam, dst: $dst_name, formats: $formats, scalar: [$($a),+], fallback: $fallback);
    };
}

/// The `Kernel`/`Descriptor` aliases and the `Family` impl of marker `$fam` (family `$name`,
/// outputs of type `$dst`) for a family with `qai8dxp` activations, `per_channel` or
/// `per_block` (then `bl` must divide `k` in multiples of 32). The family module defines
/// `PREFERRED_RHS`.
macro_rules! qai8dxp_family_impl {
    ($fam:ident, $name:literal, $dst:ty, $kind:ident) => {
        /// A kernel of this family, resolved for a CPU.
        pub type Kernel = $crate::matmul::Kernel<$fam>;
        /// A catalogue entry of this family.
        pub type Descriptor = $crate::matmul::Descriptor<$fam>;

        impl $crate::matmul::sealed::Sealed for $fam {}

        impl $crate::Family for $fam {
            const NAME: &'static str = $name;
            const BLOCKED: bool = qai8dxp_family_impl!(@blocked $kind);
            type Lhs = u8;
            type Dst = $dst;
            type Params = ();
            const PREFERRED_RHS: $crate::RhsPacking = PREFERRED_RHS;

            fn kernels() -> &'static [&'static Descriptor] {
                KERNELS
            }
        }
    };
    (@blocked per_channel) => {
        false
    };
    (@blocked per_block) => {
        true
    };
}

/// The catalogue part every family module shares: the `kernel` constructor the tier modules
/// use (descriptors of the family's formats `formats: (LhsFormat, RhsFormat)`, fixed shapes),
/// one scalar kernel per packing (`(IDENT, "name", PACKING)`, named
/// `matmul_clamp_<dst>_<name>_scalar`), `KERNELS` assembled from the tiers (i8mm, dotprod, neon,
/// scalar; `tiers: [..]` names the tier modules of a family that has fewer), and the dispatch
/// functions, with `$fallback` the scalar kernel of the family's `PREFERRED_RHS`.
macro_rules! family_catalogue {
    ($fam:ty, dst: $dst:literal, formats: $formats:tt, scalar: $scalar:tt, fallback: $fallback:ident $(,)?) => {
        family_catalogue!($fam, dst: $dst, formats: $formats, scalar: $scalar, fallback: $fallback,
                          tiers: [i8mm, dotprod, neon]);
    };
    ($fam:ty, dst: $dst:literal, formats: ($lf:ident, $rf:ident), scalar: [$(($ident:ident, $name:literal, $p:expr)),+ $(,)?],
     fallback: $fallback:ident, tiers: [$($tier:ident),*] $(,)?) => {
        family_catalogue!(@common $fam, ($lf, $rf), fallback: $fallback, tiers: [$($tier),*],
            scalar: [$(($ident, concat!("matmul_clamp_", $dst, "_", $name, "_scalar"), ($p.mr, $p.nr), $p, scalar::matmul_unchecked)),+]);
    };
    // The shared part: `scalar` rows `(IDENT, "full name", (m_step, n_step), PACKING, entry)`.
    (@common $fam:ty, ($lf:ident, $rf:ident), fallback: $fallback:ident, tiers: [$($tier:ident),*],
     scalar: [$($(#[$doc:meta])* ($ident:ident, $full:expr, $steps:expr, $p:expr, $raw:path)),+ $(,)?]) => {
        /// The LHS format of the family's kernels.
        pub const LHS_FORMAT: crate::LhsFormat = crate::LhsFormat::$lf;
        /// The RHS (weight) format of the family's kernels.
        pub const RHS_FORMAT: crate::RhsFormat = crate::RhsFormat::$rf;

        /// A catalogue entry of this family (used by the tier modules).
        #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
        const fn kernel(
            name: &'static str,
            tier: crate::matmul::Tier,
            steps: (usize, usize),
            packing: crate::Packing,
            raw: crate::matmul::RawFn<$fam>,
        ) -> Descriptor {
            Descriptor::new(name, tier, crate::Shape::fixed(LHS_FORMAT, RHS_FORMAT, steps, packing), raw)
        }

        /// The family's output element type ([`Family::Dst`](crate::Family::Dst)).
        #[allow(dead_code)]
        pub(crate) type Dst = <$fam as crate::Family>::Dst;
        /// The family's parameters ([`Family::Params`](crate::Family::Params)).
        #[allow(dead_code)]
        pub(crate) type Params = <$fam as crate::Family>::Params;

        $(
            $(#[$doc])*
            #[doc = concat!("Scalar kernel `", $full, "` (portable reference).")]
            pub static $ident: Descriptor = kernel($full, crate::matmul::Tier::Scalar, $steps, $p, $raw);
        )+

        /// Each tier's list (empty where the target lacks the tier), best tier first.
        const TIERS: &[&[&Descriptor]] = &[$($tier::KERNELS,)* &[$(&$ident),+]];

        /// Every kernel of the family on this target: the higher tiers first.
        pub static KERNELS: &[&Descriptor] =
            &crate::matmul::concat_kernels::<_, { crate::matmul::total_len(TIERS) }>(TIERS);

        family_dispatch!($fam, $fallback);
    };
}

/// The dispatch functions every family module exports (`available`, `select_for`, `select`),
/// for family marker `$fam` whose scalar kernel `$fallback` consumes its `PREFERRED_RHS`.
macro_rules! family_dispatch {
    ($fam:ty, $fallback:expr) => {
        /// The kernels usable on `cpu`, best first, resolved for it.
        pub fn available(cpu: &crate::CpuFeatures) -> heapless::Vec<Kernel, { crate::matmul::MAX_KERNELS }> {
            crate::matmul::available::<$fam>(cpu)
        }

        /// The best kernel on `cpu` for `m` rows among those that read weights packed as `rhs`
        /// (and, where the family fixes one, its `PREFERRED_LHS`), or `None` if no kernel
        /// reads that packing ([`select_from`](crate::matmul::select_from)).
        pub fn select_for(cpu: &crate::CpuFeatures, m: usize, rhs: &crate::RhsPacking) -> Option<Kernel> {
            crate::matmul::select_for::<$fam>(cpu, m, rhs)
        }

        /// The best kernel on `cpu` for `m` rows with the family's `PREFERRED_RHS` packing.
        pub fn select(cpu: &crate::CpuFeatures, m: usize) -> Kernel {
            // The scalar tier covers the preferred packing on every target.
            select_for(cpu, m, &<$fam as crate::Family>::PREFERRED_RHS).unwrap_or($fallback.portable())
        }
    };
}

/// Capacity of the list [`available`] returns: the largest catalogue must fit (a unit test of
/// each family checks it).
pub const MAX_KERNELS: usize = 64;

/// The kernels of a family usable on `cpu`, in catalogue order (best first), resolved for it.
pub fn available<F: Family>(cpu: &CpuFeatures) -> heapless::Vec<Kernel<F>, MAX_KERNELS> {
    let mut out = heapless::Vec::new();
    for k in F::kernels().iter().filter_map(|d| d.resolve(cpu).ok()) {
        // Every catalogue holds at most MAX_KERNELS kernels, so this never fails.
        let _ = out.push(k);
    }
    out
}

/// The best kernel of family `F` on `cpu` for `m` rows among those that read weights packed as
/// `rhs` ([`select_from`] over the family's catalogue, with its `PREFERRED_LHS`).
pub fn select_for<F: Family>(cpu: &CpuFeatures, m: usize, rhs: &RhsPacking) -> Option<Kernel<F>> {
    select_from(F::kernels(), cpu, m, Some(rhs), F::PREFERRED_LHS.as_ref())
}

/// The selection policy, the one every caller uses (the families' `select`, the operator and
/// both C layers): among the kernels of `list` that run on `cpu` (resolved for it) and read
/// `rhs` and `lhs` (where given; the LHS's `mr` included), the best for `m` rows:
///
/// 1. for `m <= 1` a GEMV kernel (`mr = 1`) is preferred, otherwise a GEMM kernel (`mr > 1`);
/// 2. then the highest tier;
/// 3. then the first in `list` (catalogue order, best first).
///
/// Code that names its kernels (`list`: one tier's `KERNELS`, or kernels one by one) and never
/// touches the family's catalogue links only those kernels.
pub fn select_from<F: Family>(
    list: &[&'static Descriptor<F>],
    cpu: &CpuFeatures,
    m: usize,
    rhs: Option<&RhsPacking>,
    lhs: Option<&LhsPacking>,
) -> Option<Kernel<F>> {
    let fit = |k: &Kernel<F>| (m <= 1) == (k.packing().mr == 1);
    let mut best: Option<Kernel<F>> = None;
    for d in list {
        // Without resolving: a kernel of a tier no higher than a fitting one already chosen
        // cannot win, nor one that cannot read `rhs` (selection runs on every call).
        if best.as_ref().is_some_and(|b| fit(b) && b.tier() >= d.tier()) {
            continue;
        }
        if rhs.is_some_and(|r| !d.shape().may_read(r)) {
            continue;
        }
        let Ok(k) = d.resolve(cpu) else { continue };
        if rhs.is_some_and(|r| k.rhs_packing() != *r) || lhs.is_some_and(|l| k.lhs_packing() != *l) {
            continue;
        }
        let better = match &best {
            None => true,
            Some(b) => (fit(&k), k.tier()) > (fit(b), b.tier()),
        };
        if better {
            best = Some(k);
        }
    }
    best
}

/// Total length of a family's per-tier kernel lists (a const helper for the catalogues).
pub(crate) const fn total_len<T>(parts: &[&[T]]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < parts.len() {
        total += parts[i].len();
        i += 1;
    }
    total
}

/// Concatenates a family's per-tier kernel lists into one catalogue at compile time. `N` must
/// be [`total_len`] of `parts` (a mismatch fails const evaluation).
pub(crate) const fn concat_kernels<T: Copy, const N: usize>(parts: &[&[T]]) -> [T; N] {
    let first = parts[parts.len() - 1][0];
    let mut out = [first; N];
    let (mut i, mut at) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[at] = parts[i][j];
            at += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(at == N, "catalogue length mismatch");
    out
}
