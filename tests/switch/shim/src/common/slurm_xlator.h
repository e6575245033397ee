/* test_runner's stand-in for Slurm's header: nothing to rename here. */
