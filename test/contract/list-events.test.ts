import { Code } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { ListEventsRequest_Order } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";

describeContract("ListEvents", (t) => {
  it("pages through a session by seq, oldest first and newest first", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    for (let i = 0; i < 17; i++) await t().client.appendEvent({ ...key, event: { author: "user", invocationId: `i${i}` } });

    const collect = async (order: ListEventsRequest_Order) => {
      const seqs: number[] = [];
      let pageToken = "";
      do {
        const res = await t().client.listEvents({ ...key, order, pageSize: 5, pageToken });
        expect(res.events.length).toBeLessThanOrEqual(5);
        seqs.push(...res.events.map((e) => Number(e.seq)));
        pageToken = res.nextPageToken;
      } while (pageToken);
      return seqs;
    };
    const ascending = Array.from({ length: 17 }, (_, i) => i + 1);
    expect(await collect(ListEventsRequest_Order.UNSPECIFIED)).toEqual(ascending);
    expect(await collect(ListEventsRequest_Order.ASCENDING)).toEqual(ascending);
    expect(await collect(ListEventsRequest_Order.DESCENDING)).toEqual([...ascending].reverse());
  });

  it("continues from a token after more events were appended", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    for (let i = 0; i < 3; i++) await t().client.appendEvent({ ...key, event: { author: "user" } });
    const first = await t().client.listEvents({ ...key, pageSize: 2 });
    await t().client.appendEvent({ ...key, event: { author: "user" } });
    const second = await t().client.listEvents({ ...key, pageSize: 2, pageToken: first.nextPageToken });
    expect(second.events.map((e) => Number(e.seq))).toEqual([3, 4]);
  });

  it("answers NOT_FOUND for unknown or foreign sessions and INVALID_ARGUMENT for bad paging", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    await t().client.appendEvent({ ...key, event: { author: "user" } });
    await t().client.appendEvent({ ...key, event: { author: "user" } });
    await expectCode(t().client.listEvents({ ...key, sessionId: "nope" }), Code.NotFound);
    await expectCode(t().client.listEvents({ ...key, userId: "intruder" }), Code.NotFound);
    await expectCode(t().client.listEvents({ ...key, pageSize: -5 }), Code.InvalidArgument);
    await expectCode(t().client.listEvents({ ...key, order: 7 as ListEventsRequest_Order }), Code.InvalidArgument, /order/);
    const asc = await t().client.listEvents({ ...key, pageSize: 1 });
    // A token is tied to its direction and session.
    await expectCode(
      t().client.listEvents({ ...key, pageSize: 1, order: ListEventsRequest_Order.DESCENDING, pageToken: asc.nextPageToken }),
      Code.InvalidArgument,
    );
    const other = { ...key, sessionId: "other" };
    await t().client.createSession(other);
    await expectCode(t().client.listEvents({ ...other, pageToken: asc.nextPageToken }), Code.InvalidArgument);
  });
});
