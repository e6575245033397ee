#!/bin/bash
#SBATCH -N 1
#SBATCH -t 10
#CONDUIT_PRE cp -r /archive/project/dataset /scratch/%u/%j/dataset
#CONDUIT_PRE cp '/archive/project/input file.txt' in/
#CONDUIT_POST mv -r out /archive/project/results/%j/
srun ./simulate in out
