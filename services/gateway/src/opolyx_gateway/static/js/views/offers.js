// Open trade offers at the table, with Accept / Reject / Cancel for the seats they concern.

import { COMMAND_TYPES as C } from "../constants.js";
import { $, h, money } from "../dom.js";
import { t } from "../i18n.js";
import { seatName, squareName } from "../names.js";
import { legalOf } from "../store.js";
import { cmdButton } from "./decision.js";

export function sideText(cash, squares) {
  const items = [cash ? money(cash) : null, ...squares.map((s) => squareName(s))].filter(Boolean);
  return items.length ? items.join(", ") : t("ui.offers.nothing");
}

export function render(tb) {
  const offers = tb.view.state.offers || [];
  $("#offers-card").hidden = !offers.length;
  $("#offers").replaceChildren(...offers.map((o) => {
    const li = h("li", { dataset: { offer: o.id } },
      h("div", {}, h("strong", {}, t("ui.offers.between", { from: seatName(o.from), to: seatName(o.to) }))),
      h("div", {}, t("ui.offers.gives", { items: sideText(o.give_cash, o.give_squares) })),
      h("div", {}, t("ui.offers.wants", { items: sideText(o.take_cash, o.take_squares) })),
      h("div.muted", { dataset: { deadline: o.deadline } }, ""));
    const actions = h("div.actions");
    for (const [type, key] of [[C.ACCEPT, "accept"], [C.REJECT, "reject"], [C.CANCEL, "cancel"]]) {
      const c = legalOf(type).find((x) => x.offer === o.id);
      if (c) actions.append(cmdButton(t(`ui.offers.${key}`), c, type === C.ACCEPT ? ".primary" : ""));
    }
    if (actions.children.length) li.append(actions);
    return li;
  }));
}
