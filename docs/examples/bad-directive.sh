#!/bin/bash
#SBATCH --nodes=1
#CONDUIT_PRE cp /project/in.dat /scratch/in.dat
#CONDUIT_PRE cp --user=root /project/secret /scratch/
srun ./app
