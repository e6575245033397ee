#!/bin/bash
#SBATCH -N1
#CONDUIT_PRE cp --user=root /archive/a /scratch/
#CONDUIT_PRE cp /archive/ok /scratch/
#CONDUIT_PRE rsync /archive/b /scratch/
#CONDUIT_POST cp /scratch/c
#CONDUIT_POST mv "/scratch/d /archive/
hostname
