//! The catalogue machinery: the macros that assemble each family's kernel list from its tiers,
//! and kernel selection.

use crate::cpu::CpuFeatures;
use crate::matmul::{Family, Kernel};
use crate::packing::Packing;

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
        pub const KERNELS: &[&Kernel] = &[$(&$kernel),+];

        /// This tier's kernels: none on this architecture.
        #[cfg(not(target_arch = "aarch64"))]
        pub const KERNELS: &[&Kernel] = &[];
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
            pub(crate) unsafe fn $func(args: &UncheckedArgs<fam::Dst>, strides: &$crate::matmul::TileStrides) {
                // SAFETY: forwarded from the caller's contract (with the call's tile strides),
                // with the kernel's own packing.
                unsafe { $driver(args, strides, &fam::$packing, $($arg),*) }
            }

            #[doc = concat!("`matmul_clamp_", $dst, "_", $prefix, $ms, "x", $ns, $suffix, "`.")]
            pub static $stat: Kernel = asm_catalogue!(@needs fam::kernel(
                concat!("matmul_clamp_", $dst, "_", $prefix, $ms, "x", $ns, $suffix),
                Tier::$tier,
                ($ms, $ns),
                fam::$packing,
                RawKernel::Fixed($func),
            ), $also);
        )+)+
    };
}

/// [`family_catalogue!`] over a packing subset (see [`subset_tier_module!`]): the scalar kernels
/// of both lists for `all`, of the first for `kr16`.
macro_rules! subset_family_catalogue {
    ($fam:ident, $dst_name:literal, all, [$($a:tt),+], [$($b:tt),+], fallback: $fallback:ident) => {
        family_catalogue!(
            $fam,
            dst: $dst_name,
            scalar: [$($a,)+ $($b),+],
            preferred: PREFERRED_RHS_PACKING,
            fallback: $fallback,
        );
    };
    ($fam:ident, $dst_name:literal, kr16, [$($a:tt),+], $b:tt, fallback: $fallback:ident) => {
        family_catalogue!(
            $fam,
            dst: $dst_name,
            scalar: [$($a),+],
            preferred: PREFERRED_RHS_PACKING,
            fallback: $fallback,
        );
    };
}

/// The `Kernel` alias and the `Family` impl of marker `$fam` (family `$name`, outputs of type
/// `$dst`) for a family with `qai8dxp` activations and RHS format `$rhs` (its `tile_stride`;
/// `$check` the `Packing` check of its RHS), `per_channel` or `per_block` (then `bl` must
/// divide `k` in multiples of 32).
macro_rules! qai8dxp_family_impl {
    ($fam:ident, $name:literal, $dst:ty, $rhs:ident, $check:ident, $kind:ident) => {
        /// A kernel of this family.
        pub type Kernel = $crate::matmul::Kernel<$fam>;

        impl $crate::matmul::sealed::Sealed for $fam {}

        impl $crate::Family for $fam {
            const NAME: &'static str = $name;
            const BLOCKED: bool = qai8dxp_family_impl!(@blocked $kind);
            type Dst = $dst;

            fn kernels() -> &'static [&'static Kernel] {
                KERNELS
            }

            fn lhs_tile_stride(k: usize, bl: usize, packing: &$crate::Packing) -> $crate::Result<usize> {
                packing.check_lhs()?;
                qai8dxp_family_impl!(@check_blocks $kind, k, bl);
                $crate::lhs::qai8dxp::tile_stride(k, packing.mr)
            }

            fn rhs_tile_stride(k: usize, bl: usize, packing: &$crate::Packing) -> $crate::Result<usize> {
                packing.$check()?;
                qai8dxp_family_impl!(@rhs $kind, $rhs, k, bl, packing.nr)
            }
        }
    };
    (@blocked per_channel) => { false };
    (@blocked per_block) => { true };
    (@check_blocks per_channel, $k:ident, $bl:ident) => { let _ = ($k, $bl); };
    (@check_blocks per_block, $k:ident, $bl:ident) => { $crate::packing::check_blocks($k, $bl)?; };
    (@rhs per_channel, $rhs:ident, $k:ident, $bl:ident, $nr:expr) => {{
        let _ = $bl;
        $crate::rhs::$rhs::tile_stride($k, $nr)
    }};
    (@rhs per_block, $rhs:ident, $k:ident, $bl:ident, $nr:expr) => { $crate::rhs::$rhs::tile_stride($k, $bl, $nr) };
}

/// The catalogue part every family module shares: the `kernel` constructor the tier modules
/// use, one scalar kernel per packing (`(IDENT, "name", PACKING)`, named
/// `matmul_clamp_<dst>_<name>_scalar`), `KERNELS` assembled from
/// the tiers (i8mm, dotprod, neon, scalar; `tiers: [..]` names the tier modules of a family that
/// has fewer), and the dispatch functions, with `$preferred` the RHS packing `select` uses and
/// `$fallback` its scalar kernel.
macro_rules! family_catalogue {
    ($fam:ty, dst: $dst:literal, scalar: $scalar:tt, preferred: $preferred:expr, fallback: $fallback:ident $(,)?) => {
        family_catalogue!($fam, dst: $dst, scalar: $scalar, preferred: $preferred, fallback: $fallback,
                          tiers: [i8mm, dotprod, neon]);
    };
    ($fam:ty, dst: $dst:literal, scalar: [$(($ident:ident, $name:literal, $p:expr)),+ $(,)?],
     preferred: $preferred:expr, fallback: $fallback:ident, tiers: [$($tier:ident),*] $(,)?) => {
        /// A catalogue entry of this family (used by the tier modules).
        #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
        const fn kernel(
            name: &'static str,
            tier: crate::matmul::Tier,
            steps: (usize, usize),
            packing: crate::Packing,
            raw: crate::matmul::RawKernel<Dst>,
        ) -> Kernel {
            Kernel::new(name, tier, steps, packing, raw)
        }

        /// The family's output element type ([`Family::Dst`](crate::Family::Dst)).
        pub(crate) type Dst = <$fam as crate::Family>::Dst;

        $(
            #[doc = concat!("Scalar kernel `matmul_clamp_", $dst, "_", $name, "_scalar` (portable reference).")]
            pub static $ident: Kernel = Kernel::new(
                concat!("matmul_clamp_", $dst, "_", $name, "_scalar"),
                crate::matmul::Tier::Scalar,
                ($p.mr, $p.nr),
                $p,
                crate::matmul::RawKernel::Generic(scalar::matmul_unchecked),
            );
        )+

        /// Each tier's list (empty where the target lacks the tier), best tier first.
        const TIERS: &[&[&Kernel]] = &[$($tier::KERNELS,)* &[$(&$ident),+]];

        /// Every kernel of the family on this target: the higher tiers first.
        pub static KERNELS: &[&Kernel] =
            &crate::matmul::concat_kernels::<_, { crate::matmul::total_len(TIERS) }>(TIERS);

        family_dispatch!($fam, $preferred, $fallback);
    };
}

/// The dispatch functions every family module exports (`available`, `select_for`, `select`),
/// for family marker `$fam` whose preferred RHS packing is `$preferred` and whose scalar kernel
/// `$fallback` consumes it.
macro_rules! family_dispatch {
    ($fam:ty, $preferred:expr, $fallback:expr) => {
        /// The kernels usable on `cpu`, best first.
        pub fn available(cpu: &crate::CpuFeatures) -> heapless::Vec<&'static Kernel, { crate::matmul::MAX_KERNELS }> {
            crate::matmul::available::<$fam>(cpu)
        }

        /// The best kernel on `cpu` for `m` rows among those that consume RHS weights packed
        /// with `rhs`'s `(nr, kr, sr)`, or `None` if no kernel uses that packing
        /// ([`select_for`](crate::matmul::select_for)).
        pub fn select_for(cpu: &crate::CpuFeatures, m: usize, rhs: &crate::Packing) -> Option<&'static Kernel> {
            crate::matmul::select_for::<$fam>(cpu, m, rhs)
        }

        /// The best kernel on `cpu` for `m` rows with the family's preferred RHS packing.
        pub fn select(cpu: &crate::CpuFeatures, m: usize) -> &'static Kernel {
            // The scalar tier covers the preferred packing on every target.
            select_for(cpu, m, &$preferred).unwrap_or(&$fallback)
        }
    };
}

/// Capacity of the list [`available`] returns: the largest catalogue must fit (a unit test of
/// each family checks it).
pub const MAX_KERNELS: usize = 64;

/// The kernels of a family usable on `cpu`, in catalogue order (best first).
pub fn available<F: Family>(cpu: &CpuFeatures) -> heapless::Vec<&'static Kernel<F>, MAX_KERNELS> {
    let mut out = heapless::Vec::new();
    for k in F::kernels().iter().filter(|k| k.is_available(cpu)) {
        // Every catalogue holds at most MAX_KERNELS kernels, so this never fails.
        let _ = out.push(*k);
    }
    out
}

/// The best kernel of family `F` on `cpu` for `m` rows among those that consume RHS weights
/// packed with `rhs`'s `(nr, kr, sr)` (its `mr` is ignored).
///
/// For `m <= 1` a GEMV kernel (`mr = 1`) is preferred, otherwise a GEMM kernel (`mr > 1`); then
/// the highest available tier; then catalogue order.
pub fn select_for<F: Family>(cpu: &CpuFeatures, m: usize, rhs: &Packing) -> Option<&'static Kernel<F>> {
    select_from(F::kernels(), cpu, m, rhs)
}

/// [`select_for`] among the kernels of `list` only (e.g. one tier's `KERNELS`, or kernels named
/// one by one): code that never touches the family's catalogue links only these kernels.
pub fn select_from<F: Family>(
    list: &[&'static Kernel<F>],
    cpu: &CpuFeatures,
    m: usize,
    rhs: &Packing,
) -> Option<&'static Kernel<F>> {
    let fit = |p: &Packing| (m <= 1) == (p.mr == 1);
    let mut best: Option<&'static Kernel<F>> = None;
    for &k in list.iter().filter(|k| k.is_available(cpu) && k.packing.same_rhs(rhs)) {
        let better = match best {
            None => true,
            Some(b) => (fit(&k.packing), k.tier) > (fit(&b.packing), b.tier),
        };
        if better {
            best = Some(k);
        }
    }
    best
}

/// Total length of a family's per-tier kernel lists (a const helper for the catalogues, also
/// of the float families).
pub(crate) const fn total_len<T>(parts: &[&[T]]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < parts.len() {
        total += parts[i].len();
        i += 1;
    }
    total
}

/// Concatenates a family's per-tier kernel lists into one catalogue at compile time (also the
/// float families'). `N` must be [`total_len`] of `parts` (a mismatch fails const evaluation).
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
