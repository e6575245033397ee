#!/bin/bash
#SBATCH --job-name=climate-run
#SBATCH --nodes=1
#SBATCH --time=00:30:00
#
# Bring the input mesh (into a new /scratch/climate/<job id>/) and the
# forcing data to scratch before the job starts; take the results back
# to the project area after it ends (into /project/climate/runs/<job id>/).
#CONDUIT_PRE cp -r /project/climate/mesh-v3 /scratch/climate/%j/
#CONDUIT_PRE cp /project/climate/forcing/2026-01.nc \
#CONDUIT        /project/climate/forcing/2026-02.nc /scratch/climate/forcing/
#CONDUIT_POST mv -r /scratch/climate/%j/results /project/climate/runs/%j/
#CONDUIT_POST cp '/scratch/climate/%j/run log.txt' /project/climate/runs/%j-log.txt

cd /scratch/climate/$SLURM_JOB_ID
srun ./model --mesh mesh-v3 --forcing ../forcing --out results
