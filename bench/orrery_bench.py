"""What the Python benchmarks of bench/ share."""
import os
import shutil


def copy_binary(path, work):
    """A copy of the orrery binary PATH in WORK/bin, with the shared library it loads
    from ../lib beside it (its run path) when its build has one, as
    bench/whatif-accuracy.sh takes it: every estimate of a run is made by one build, even
    when the build directory is rebuilt meanwhile.  Returns the copy's path."""
    os.makedirs(os.path.join(work, "bin"), exist_ok=True)
    os.makedirs(os.path.join(work, "lib"), exist_ok=True)
    orrery = os.path.join(work, "bin", "orrery")
    shutil.copy2(path, orrery)
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), "lib")
    if os.path.isdir(lib):
        for name in os.listdir(lib):
            if ".so" in name and os.path.isfile(os.path.join(lib, name)):
                shutil.copy(os.path.join(lib, name), os.path.join(work, "lib", name))
    return orrery
