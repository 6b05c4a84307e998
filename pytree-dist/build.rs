//! With feature `mpi`: compiles `src/mpi_in_place.c`, which gives the MPI
//! backend the value of `MPI_IN_PLACE` (a macro of `mpi.h`, whose value
//! differs between MPI libraries; rsmpi 0.8 does not export it), against
//! the `mpi.h` of the library that rsmpi's own build finds: the same
//! probe (`build-probe-mpi`), and `mpicc` where it exists, as rsmpi's
//! `mpi-sys` does. Without the feature, nothing.

fn main() {
    #[cfg(feature = "mpi")]
    compile_in_place();
}

#[cfg(feature = "mpi")]
fn compile_in_place() {
    println!("cargo:rerun-if-changed=src/mpi_in_place.c");
    let lib = match build_probe_mpi::probe() {
        Ok(lib) => lib,
        Err(errs) => {
            for e in &errs {
                println!("cargo:warning=MPI probe: {e}");
            }
            panic!(
                "pytree-dist (feature mpi): no MPI library found; on Debian/Ubuntu: \
                 apt-get install libopenmpi-dev openmpi-bin libclang-dev pkgconf"
            );
        }
    };
    let mut build = cc::Build::new();
    build.file("src/mpi_in_place.c");
    match lib.mpicc {
        Some(mpicc) => {
            build.compiler(mpicc);
        }
        None => {
            for dir in &lib.include_paths {
                build.include(dir);
            }
        }
    }
    build.compile("pytree_dist_mpi_in_place");
}
