#!/bin/bash
#SBATCH -N 1
#CONDUIT_PRE cp -r /archive/set/%a /scratch/%u/set/
#CONDUIT_POST cp results /archive/pool=fast/%j/
hostname
#CONDUIT_POST cp more /archive/more
