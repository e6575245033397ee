#!/bin/bash
#SBATCH --array=0-9
#CONDUIT_PRE cp /project/x%%a /scratch/x
#CONDUIT_PRE cp /project/in-%a /scratch/in-%a
#CONDUIT_PRE cp /project/j%%j /scratch/j
#CONDUIT_PRE cp /project/job-%j /scratch/job-%j
#CONDUIT_PRE cp /project/digit-%b /scratch/digit-%b
#CONDUIT_PRE cp /project/b%%b /scratch/b
#CONDUIT_PRE cp /project/array-%A /scratch/array-%A
#CONDUIT_PRE cp "/project/back\\\\slash" /scratch/back
#CONDUIT_PRE cp /project/after-%a /scratch/after
./run
