"""A sixth corpus: NumPy/SciPy programs in the styles of published model code the first
five corpora did not cover -- a graph convolutional network, Cox regression's partial
likelihood, Holt-Winters smoothing, bilevel total-variation denoising, a factorization
machine, SimCLR's NT-Xent loss, maximum-entropy IRL through soft value iteration, an SIR
epidemic fit, an RBM's pseudo-likelihood, camera pose by reprojection error, unrolled
ISTA/FISTA for the lasso and robot-arm inverse kinematics -- written for this
repository, run unchanged by myc: see README.md here and docs/realworld.md."""

PROGRAMS = (
    "gcn", "cox_ph", "holt_winters", "tv_denoise", "factorization_machine", "nt_xent",
    "maxent_irl", "sir_epidemic", "rbm_pseudolikelihood", "camera_pose", "ista_lasso",
    "ik_arm",
)
