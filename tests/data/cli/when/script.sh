#!/bin/bash
#SBATCH -N1
#CONDUIT_POST --when=success cp -r %d/results /archive/%u/results-%j
#CONDUIT_POST cp -r %d/logs /archive/%u/logs-%j
#CONDUIT_POST --when=failure mv %d/ckpt /archive/%u/ckpt-%j
./simulate
