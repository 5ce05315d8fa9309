"""Black-Scholes prices of a strip of European calls and puts, with the greeks (delta,
vega, rho, theta and gamma) by differentiating the pricing formula."""

import numpy as np
from scipy.stats import norm

import myc


def d1_d2(spot, strike, vol, rate, expiry):
    sd = vol * np.sqrt(expiry)
    d1 = (np.log(spot / strike) + (rate + 0.5 * vol**2) * expiry) / sd
    return d1, d1 - sd


def call_price(spot, strike, vol, rate, expiry):
    d1, d2 = d1_d2(spot, strike, vol, rate, expiry)
    return spot * norm.cdf(d1) - strike * np.exp(-rate * expiry) * norm.cdf(d2)


def put_price(spot, strike, vol, rate, expiry):
    d1, d2 = d1_d2(spot, strike, vol, rate, expiry)
    return strike * np.exp(-rate * expiry) * norm.cdf(-d2) - spot * norm.cdf(-d1)


def book_value(spot, vol, rate, expiry, strikes=np.array([80.0, 95.0, 100.0, 110.0]),
               positions=np.array([1.0, -2.0, 1.5, 0.5])):
    calls = call_price(spot, strikes, vol, rate, expiry)
    puts = put_price(spot, strikes, vol, rate, expiry=expiry)
    return np.sum(positions * (calls + 0.5 * puts))


greeks = myc.grad(book_value, argnums=(0, 1, 2, 3))
gamma = myc.grad(myc.grad(book_value))


def analytic_call_delta(spot, strike, vol, rate, expiry):
    return norm.cdf(d1_d2(spot, strike, vol, rate, expiry)[0])


def case():
    return dict(fn=book_value, args=(101.0, 0.25, 0.03, 0.75), argnums=(0, 1, 2, 3),
                gradient=greeks)


if __name__ == "__main__":
    print("value", book_value(101.0, 0.25, 0.03, 0.75))
    print("delta, vega, rho, -theta", greeks(101.0, 0.25, 0.03, 0.75))
    print("gamma", gamma(101.0, 0.25, 0.03, 0.75))
