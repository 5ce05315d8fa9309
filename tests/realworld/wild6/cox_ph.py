"""Cox proportional-hazards regression by its partial likelihood, as survival-analysis
tutorials write it: subjects sorted by descending time with ``np.argsort(-time)``, the
risk-set log-sums as a running ``np.logaddexp.accumulate`` of the linear predictor
(Breslow, no ties), the events picked by a boolean ``event.astype(bool)``, an elastic-net
style penalty with keyword arguments, and Harrell's concordance index computed by a
double loop with ``continue``.  The penalised negative log partial likelihood is
differentiated with respect to the coefficients."""

import numpy as np

import myc


def neg_log_partial_likelihood(beta, X, time, event, l2=0.1, l1=0.0):
    order = np.argsort(-time)
    eta = X[order] @ beta
    log_risk = np.logaddexp.accumulate(eta)     # log sum_{j: t_j >= t_i} exp(eta_j)
    observed = event[order].astype(bool)
    ll = np.sum(eta[observed] - log_risk[observed])
    penalty = 0.5 * l2 * beta @ beta + l1 * np.sum(np.sqrt(beta ** 2 + 1e-8))
    return -ll / observed.sum() + penalty


def concordance(risk, time, event):
    num, den = 0.0, 0.0
    n = len(time)
    for i in range(n):
        if not event[i]:
            continue
        for j in range(n):
            if time[j] > time[i]:
                den += 1.0
                if risk[i] > risk[j]:
                    num += 1.0
                elif risk[i] == risk[j]:
                    num += 0.5
    return num / den


def make_data(n=40, d=4, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    beta_true = np.array([0.8, -0.5, 0.0, 0.3])
    hazard = np.exp(X @ beta_true)
    t_event = rng.exponential(1.0 / hazard)
    t_cens = rng.exponential(1.5, size=n)
    time = np.minimum(t_event, t_cens)
    event = (t_event <= t_cens).astype(int)
    return X, time, event


def case():
    X, time, event = make_data()
    return dict(fn=neg_log_partial_likelihood,
                args=(np.array([0.1, -0.2, 0.05, 0.0]), X, time, event, 0.1, 0.01),
                argnums=0)


if __name__ == "__main__":
    X, time, event = make_data()
    beta = np.zeros(X.shape[1])
    g = myc.grad(neg_log_partial_likelihood)
    for _ in range(300):
        beta = beta - 0.5 * g(beta, X, time, event)
    print(beta, myc.jit(concordance)(X @ beta, time, event))
