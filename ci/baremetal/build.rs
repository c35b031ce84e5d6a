//! Links with aarch64-rt's `image.ld` (found in its OUT_DIR, which it adds to the search path),
//! this crate's `memory.ld` and defmt's `defmt.x` (from defmt's OUT_DIR, likewise): the latter
//! collects the interned log strings into the `.defmt` section (INFO: in the ELF for the
//! decoder, not loaded into memory).

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    println!("cargo:rustc-link-search={dir}");
    println!("cargo:rustc-link-arg=-Timage.ld");
    println!("cargo:rustc-link-arg=-Tmemory.ld");
    println!("cargo:rustc-link-arg=-Tdefmt.x");
    println!("cargo:rerun-if-changed=memory.ld");
    println!("cargo:rerun-if-changed=build.rs");
}
