"""Deterministic seed data: 200 customers, 5 orders each, 3 lines an order."""
from decimal import Decimal

from sqlalchemy.orm import Session

from shop.db import engine
from shop.models import Customer, Order, OrderLine

PRODUCTS = ["kettle", "teapot", "mug", "saucer", "spoon", "tray", "cosy"]

with Session(engine()) as session:
    line_id = 0
    for c in range(1, 201):
        customer = Customer(id=c, name=f"customer {c:03d}")
        for o in range(5):
            order = Order(id=c * 10 + o)
            for n in range(3):
                line_id += 1
                order.lines.append(OrderLine(
                    id=line_id, product=PRODUCTS[line_id % len(PRODUCTS)],
                    quantity=1 + line_id % 4, price=Decimal(line_id % 50) + Decimal("0.99")))
            customer.orders.append(order)
        session.add(customer)
    session.commit()
