/* test_runner: slurm_conf is only read by log_flag, a no-op here. */
