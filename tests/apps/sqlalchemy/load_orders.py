"""What the shop loads at start-up: every customer with their orders and lines, as JSON on stdout.

SHOP_LAZY=1 loads the orders and lines one customer and one order at a time (lazy loading, an
N+1), which is what a pull request that drops the eager loading ships.
"""
import json
import os
import sys

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from shop.db import engine
from shop.models import Customer, Order

query = select(Customer).order_by(Customer.id)
if os.environ.get("SHOP_LAZY") != "1":
    query = query.options(selectinload(Customer.orders).selectinload(Order.lines))

with Session(engine()) as session:
    customers = [
        {
            "id": c.id,
            "name": c.name,
            "orders": [
                {
                    "id": o.id,
                    "lines": [
                        {"id": l.id, "product": l.product, "quantity": l.quantity,
                         "price": str(l.price)}
                        for l in o.lines
                    ],
                }
                for o in c.orders
            ],
        }
        for c in session.scalars(query)
    ]
json.dump({"customers": customers}, sys.stdout, indent=1)
sys.stdout.write("\n")
