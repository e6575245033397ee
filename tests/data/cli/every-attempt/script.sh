#!/bin/bash
#SBATCH --requeue
#CONDUIT_PRE cp -r --every-attempt /project/mesh /scratch/%j/
#CONDUIT_PRE cp /project/params.txt /scratch/%j-params.txt
#CONDUIT_POST cp -r /scratch/%j/out /project/runs/%j
srun ./model
